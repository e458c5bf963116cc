package proc

import (
	"bufio"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopAllStopsTheWholeGroup(t *testing.T) {
	g := NewGroup()
	// The shell ignores nothing and starts a grandchild that must die too.
	p, err := g.Start("sleeper", exec.Command("sh", "-c", "sleep 60 & wait"), syscall.SIGTERM)
	if err != nil {
		t.Fatal(err)
	}
	pgid := p.Pid()
	if err := g.StopAll(5 * time.Second); err != nil {
		t.Fatalf("StopAll: %v", err)
	}
	// The grandchild dies of the signal but may take a moment to be reaped
	// on a loaded machine: wait for the group to empty, within reason.
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-pgid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has members 10 s after StopAll", pgid)
		}
	}
	if len(g.live()) != 0 {
		t.Fatalf("group still lists %d children", len(g.live()))
	}
}

func TestStopKillsAChildThatIgnoresTheStopSignal(t *testing.T) {
	g := NewGroup()
	cmd := exec.Command("sh", "-c", "trap '' INT; echo ready; sleep 60")
	out, _ := cmd.StdoutPipe()
	p, err := g.Start("stubborn", cmd, syscall.SIGINT)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the trap is set, or the signal would kill the shell early.
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(300 * time.Millisecond); err == nil {
		t.Fatal("Stop of a child that ignores SIGINT should report that it killed it")
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("child still running after Stop")
	}
}
