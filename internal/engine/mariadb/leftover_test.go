package mariadb

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

// fakeServer starts a process named mariadbd (a copy of sleep) working in
// dataDir for secs seconds, and writes its pid file.
func fakeServer(t *testing.T, in *Instance, secs string) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), "mariadbd")
	if err := os.WriteFile(fake, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fake, secs)
	cmd.Dir = in.DataDir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	if err := os.WriteFile(in.pidFile(), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The SIGKILL window (issue 36): a start waits for a mariadbd a killed
// calibra left shutting down (here it exits a second later) instead of
// advising clean; only one that stays is refused.
func TestAStartWaitsForAServerStillExiting(t *testing.T) {
	path := t.TempDir()
	in := &Instance{cfg: InstanceConfig{Path: path}, DataDir: filepath.Join(path, DataDirName)}
	if err := os.Mkdir(in.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	fakeServer(t, in, "1")
	if _, ok := in.runningPID(); !ok {
		t.Fatal("the fake mariadbd is not found")
	}
	if err := in.awaitLeftover(context.Background()); err != nil {
		t.Fatalf("a server that exits a second later: %v", err)
	}

	defer func(w time.Duration) { leftoverWait = w }(leftoverWait)
	leftoverWait = 300 * time.Millisecond
	fakeServer(t, in, "600")
	err := in.awaitLeftover(context.Background())
	if err == nil || !strings.Contains(err.Error(), "still runs on "+in.DataDir) || !strings.Contains(err.Error(), "calibra clean --path "+path) {
		t.Fatalf("a server that stays: %v", err)
	}
}
