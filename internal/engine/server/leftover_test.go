package server

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// StopLeftover waits for the process itself, not only for what running
// says (its pid file): mariadbd removes its pid file before it exits, and
// clean then found it still alive.
func TestStopLeftoverWaitsForTheProcess(t *testing.T) {
	// Exits 0.3 s after SIGTERM, as a server shutting down does.
	cmd := exec.Command("sh", "-c", `trap 'sleep 0.3; exit 0' TERM; while :; do sleep 0.05; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	pid := cmd.Process.Pid
	for processName(pid) == "" {
		time.Sleep(10 * time.Millisecond) // until the shell runs
	}
	time.Sleep(100 * time.Millisecond) // and has set its trap
	StopLeftover(pid, syscall.SIGTERM, time.Minute, func() bool { return false })
	if name := processName(pid); name != "" {
		t.Fatalf("StopLeftover returned while %s (pid %d) still ran", name, pid)
	}
	if processName(os.Getpid()) == "" {
		t.Fatal("processName does not see this test running")
	}
}
