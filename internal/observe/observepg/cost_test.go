//go:build integration

package observepg

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/observe"
)

// TestSamplerCost measures what the sampler costs at its default rates:
// the CPU time of this process (getrusage) and of the sampler's server
// backend (/proc/PID/stat) over CALIBRA_OBSERVE_COST (e.g. 30s), as a
// share of all CPUs. Opt-in: it takes as long as it is told.
func TestSamplerCost(t *testing.T) {
	span, err := time.ParseDuration(os.Getenv("CALIBRA_OBSERVE_COST"))
	if err != nil {
		t.Skip("set CALIBRA_OBSERVE_COST=30s to measure the sampler's cost")
	}
	target, _ := startPostgres(t, "")
	ctx := context.Background()
	s, err := observe.Start(ctx, observe.Config{Path: target.Managed.DataDir, Engine: target})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	var backend int
	err = conn.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", ApplicationName).Scan(&backend)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	selfBefore, serverBefore, start := selfCPU(t), backendCPU(t, backend), time.Now()
	time.Sleep(span)
	self, server, wall := selfCPU(t)-selfBefore, backendCPU(t, backend)-serverBefore, time.Since(start)
	share := func(cpu time.Duration) float64 {
		return 100 * cpu.Seconds() / (wall.Seconds() * float64(runtime.NumCPU()))
	}
	o := s.Window(start, time.Now())
	t.Logf("over %v on %d CPUs: sampler process %v CPU (%.3f%%), its server backend %v (%.3f%%), together %.3f%% of the machine; %d wait polls",
		wall.Round(time.Millisecond), runtime.NumCPU(), self, share(self), server, share(server), share(self+server), o.DB.WaitSamples)
}

func selfCPU(t *testing.T) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendCPU reads utime + stime of a process from /proc/PID/stat.
func backendCPU(t *testing.T, pid int) time.Duration {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseUint(f[11], 10, 64)
	stime, _ := strconv.ParseUint(f[12], 10, 64)
	const userHZ = 100 // USER_HZ is 100 on every Linux architecture Go supports
	return time.Duration(utime+stime) * time.Second / userHZ
}
