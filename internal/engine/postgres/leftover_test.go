package postgres

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakePostmaster starts a process named postgres (a copy of sleep)
// working in dataDir for secs seconds, and writes its postmaster.pid.
func fakePostmaster(t *testing.T, dataDir, secs string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "postgres")
	if err := os.WriteFile(fake, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, secs)
	cmd.Dir = dataDir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	if err := os.WriteFile(filepath.Join(dataDir, "postmaster.pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The SIGKILL window (issue 36): right after a killed calibra, its
// postmaster is still shutting down on its parent-death signal. The next
// start waits for a server that goes (here a second later) rather than
// advise clean, which deletes the loaded data; only one that stays is
// refused, and the advice names what clean costs.
func TestAStartWaitsForAServerStillExiting(t *testing.T) {
	path := t.TempDir()
	dataDir := filepath.Join(path, DataDirName)
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := &Instance{cfg: InstanceConfig{Path: path}, DataDir: dataDir}
	fakePostmaster(t, dataDir, "1")
	if _, ok := in.runningPID(); !ok {
		t.Fatal("the fake postmaster is not found")
	}
	if err := in.awaitLeftover(context.Background()); err != nil {
		t.Fatalf("a server that exits a second later: %v", err)
	}

	defer func(w time.Duration) { leftoverWait = w }(leftoverWait)
	leftoverWait = 300 * time.Millisecond
	fakePostmaster(t, dataDir, "600")
	err := in.awaitLeftover(context.Background())
	if err == nil || !strings.Contains(err.Error(), "still runs on "+dataDir) || !strings.Contains(err.Error(), "calibra clean --path "+path) {
		t.Fatalf("a server that stays: %v", err)
	}
}
