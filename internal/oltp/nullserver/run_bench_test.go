package nullserver_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/nullserver"
	"github.com/calibra-bench/calibra/internal/progress"
)

// serveEnv makes the test binary a null server in that directory, so a
// benchmark's process holds the driver alone.
const serveEnv = "CALIBRA_NULLSERVER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(serveEnv); dir != "" {
		s, err := nullserver.Listen(dir, 4)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_, _ = io.Copy(io.Discard, os.Stdin) // until the benchmark ends
		s.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childServer starts a null server in a child process and returns its
// DSN.
func childServer(b *testing.B) string {
	dir := b.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	for range 100 {
		if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL.5432")); err == nil {
			return fmt.Sprintf("host=%s port=%d user=calibra dbname=calibra sslmode=disable", dir, nullserver.Port)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("the null server did not start")
	return ""
}

// BenchmarkNullRun drives oltp.Run against a null server in a child
// process, so the process's CPU is the driver's: it reports the driver's
// CPU µs and allocations a transaction over the window (allocations
// counted between the window's edges), for each mode and polling threads,
// and client mode on goroutines.
func BenchmarkNullRun(b *testing.B) {
	for _, c := range []struct {
		mode    oltp.Mode
		threads int
		driver  string
	}{{oltp.ModeProcedures, 1, ""}, {oltp.ModeProcedures, 2, ""}, {oltp.ModeClient, 1, ""}, {oltp.ModeClient, 2, ""}, {oltp.ModeClient, 0, oltp.DriverGoroutines}} {
		b.Run(fmt.Sprintf("%s-%d%s", c.mode, c.threads, c.driver), func(b *testing.B) {
			target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{DSN: childServer(b)})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				var ms [2]runtime.MemStats
				edge := 0
				cfg := oltp.RunConfig{Users: 8, Mode: c.mode, DriverThreads: c.threads, Driver: c.driver, Rampup: time.Second, Duration: 3 * time.Second, Seed: 1,
					Edge: func() time.Time { runtime.ReadMemStats(&ms[min(edge, 1)]); edge++; return time.Now() }}
				out, _, err := oltp.Run(context.Background(), target, cfg, progress.New(io.Discard, progress.None, false))
				if err != nil {
					b.Fatal(err)
				}
				n := out.TPMClient * out.DurationS / 60
				b.ReportMetric(out.Driver.CPUUsPerTxn, "cpu-µs/txn")
				b.ReportMetric(float64(ms[1].Mallocs-ms[0].Mallocs)/n, "allocs/txn")
				b.ReportMetric(out.TPMClient/60, "txn/s")
			}
		})
	}
}
