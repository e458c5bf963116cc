package postgres

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// A stale postmaster.pid whose PID now belongs to another cluster's
// process (named postgres, working elsewhere) must not be signalled by
// Remove (calibra clean): it once SIGQUIT a stranger's backend.
func TestRemoveSparesAStrangerNamedPostgres(t *testing.T) {
	path := t.TempDir()
	elsewhere := t.TempDir()
	// A process whose name is "postgres" but whose cwd is not our data
	// directory: a copy of sleep under that name.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(elsewhere, "postgres")
	if err := os.WriteFile(fake, data, 0o755); err != nil {
		t.Fatal(err)
	}
	stranger := exec.Command(fake, "60")
	stranger.Dir = elsewhere
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stranger.Process.Kill(); stranger.Wait() })

	dataDir := filepath.Join(path, DataDirName)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	pidFile := []byte(strconv.Itoa(stranger.Process.Pid) + "\n" + dataDir + "\n")
	if err := os.WriteFile(filepath.Join(dataDir, "postmaster.pid"), pidFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if removed, err := Remove(path); !removed || err != nil {
		t.Fatalf("Remove: %v, %v; want the stale data directory removed", removed, err)
	}
	if err := stranger.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the stranger named postgres was signalled: %v", err)
	}
	var ws syscall.WaitStatus
	if pid, _ := syscall.Wait4(stranger.Process.Pid, &ws, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("the stranger named postgres exited: %v", ws)
	}
}
