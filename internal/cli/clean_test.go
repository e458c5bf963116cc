package cli

import (
	"context"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/pathlock"
)

// clean removes the socket directories and empty cgroups that killed runs
// left, and never a live run's: one whose lock is held, or whose server
// still listens, or the managed instance running under another path.
func TestCleanRemovesWhatKilledRunsLeft(t *testing.T) {
	clitest.RequirePostgres(t)
	path, other := clitest.StorageDir(t), clitest.StorageDir(t)
	tmp := clitest.StorageDir(t) // the server's account must reach its socket there
	t.Setenv("TMPDIR", tmp)      // the socket directories of this test only
	live := clitest.ExistingServer(t, other)

	dead := 1 << 22 // past the kernel's largest PID: no process has it
	if data, err := os.ReadFile("/proc/sys/kernel/pid_max"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			dead = n + 1
		}
	}
	sockDir := func(pgLock int) string {
		t.Helper()
		dir, err := os.MkdirTemp(socketBase(t), "calibra-sock-")
		if err != nil {
			t.Fatal(err)
		}
		if pgLock != 0 {
			lock := filepath.Join(dir, ".s.PGSQL.5432.lock")
			if err := os.WriteFile(lock, []byte(strconv.Itoa(pgLock)+"\n/somewhere/calibra-pg\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	emptyStale, deadServer := sockDir(0), sockDir(dead)
	liveServer := sockDir(os.Getpid())
	held := sockDir(0)
	lock, err := pathlock.Acquire(held, "server socket")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()

	// Cgroups where this host lets root make them (cgroup v1 memory here).
	var deadCgroup, liveCgroup string
	if own := ownMemoryCgroup(); own != "" {
		deadCgroup = filepath.Join(own, "calibra-"+strconv.Itoa(dead))
		liveCgroup = filepath.Join(own, "calibra-"+strconv.Itoa(os.Getpid()))
		for _, cg := range []string{deadCgroup, liveCgroup} {
			if err := os.Mkdir(cg, 0o755); err != nil {
				t.Logf("no cgroups here: %v", err)
				deadCgroup, liveCgroup = "", ""
				break
			}
			t.Cleanup(func() { os.Remove(cg) })
		}
	}

	code, _, stderr := clitest.Run(t, "clean", "--path", path)
	if code != 0 {
		t.Fatalf("clean: exit %d\n%s", code, stderr)
	}
	for _, gone := range []string{emptyStale, deadServer, deadCgroup} {
		if _, err := os.Stat(gone); gone != "" && err == nil {
			t.Errorf("clean left %s, which a dead run left", gone)
		}
	}
	for _, kept := range []string{liveServer, held, liveCgroup} {
		if _, err := os.Stat(kept); kept != "" && err != nil {
			t.Errorf("clean removed %s, a live run's", kept)
		}
	}
	if !strings.Contains(stderr, "socket directories and") {
		t.Errorf("clean did not say what it removed:\n%s", stderr)
	}
	// The managed instance running under the other path still answers.
	conn, err := pgx.Connect(context.Background(), live("calibra", "postgres"))
	if err != nil {
		t.Fatalf("clean broke a live instance: %v", err)
	}
	conn.Close(context.Background())
}

// ownMemoryCgroup is this process's cgroup v1 memory directory, or "".
func ownMemoryCgroup() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && parts[1] == "memory" {
			dir := filepath.Join("/sys/fs/cgroup/memory", parts[2])
			if _, err := os.Stat(dir); err == nil {
				return dir
			}
		}
	}
	return ""
}

// kill -9 of calibra leaves its socket directory and its memory cgroup
// (its server shuts down on its own); clean removes both.
func TestCleanAfterAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	tmp := clitest.StorageDir(t)
	t.Setenv("TMPDIR", tmp) // the child's socket directory lands here
	own := ownMemoryCgroup()
	cgroups := func() []string {
		if own == "" {
			return nil
		}
		// The dead runs' (calibra-PID-N): a live calibra beside this
		// test (this process's own runs, another package's, a user's)
		// holds its cgroups for as long as it lives, and clean keeps them.
		m, _ := filepath.Glob(filepath.Join(own, "calibra-*"))
		return slices.DeleteFunc(m, func(c string) bool {
			pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(c), "calibra-"), "-")
			n, err := strconv.Atoi(pid)
			return err != nil || syscall.Kill(n, 0) != syscall.ESRCH
		})
	}
	before := len(cgroups())
	code, out := clitest.SignalChild(t, "iocal: loading", 0, []syscall.Signal{syscall.SIGKILL},
		"iocal", "--path", path, "--size", "64MiB", "--progress", "plain", "--out", filepath.Join(path, "run"))
	if code != -1 {
		t.Fatalf("calibra was not killed: exit %d\n%s", code, out)
	}
	// Its server, told by the kernel that its parent died, shuts down.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(path, "calibra-pg", "postmaster.pid")); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed calibra's server still runs")
		}
	}
	socks, _ := filepath.Glob(filepath.Join(socketBase(t), "calibra-sock-*"))
	if len(socks) != 1 {
		t.Fatalf("%d socket directories after the kill, want the one it leaked", len(socks))
	}
	leakedCgroup := own != "" && len(cgroups()) > before
	code, _, stderr := clitest.Run(t, "clean", "--path", path)
	if code != 0 {
		t.Fatalf("clean: exit %d\n%s", code, stderr)
	}
	if socks, _ := filepath.Glob(filepath.Join(socketBase(t), "calibra-sock-*")); len(socks) != 0 {
		t.Errorf("clean left %q", socks)
	}
	if leakedCgroup && len(cgroups()) > before {
		t.Errorf("clean left the killed run's cgroup: %q", cgroups())
	}
	if !leakedCgroup {
		t.Log("no memory cgroup here to leak")
	}
}
