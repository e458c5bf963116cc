package server

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The SIGKILL window: a leftover server that goes within LeftoverWait is
// waited for; one that stays is refused in one sentence whose advice
// names what clean costs; Ctrl-C ends the wait.
func TestAwaitLeftover(t *testing.T) {
	dir := t.TempDir()
	// FakeServer reaps its process: a signal 0 finds only a live one.
	alive := func(pid int) func() (int, bool) {
		return func() (int, bool) { return pid, syscall.Kill(pid, 0) == nil }
	}
	if err := AwaitLeftover(context.Background(), "Test", dir, dir, alive(testenv.FakeServer(t, "going", dir, "1"))); err != nil {
		t.Errorf("a server that exits a second later: %v", err)
	}
	defer func(w time.Duration) { LeftoverWait = w }(LeftoverWait)
	LeftoverWait = 300 * time.Millisecond
	staying := alive(testenv.FakeServer(t, "staying", dir, "600"))
	err := AwaitLeftover(context.Background(), "Test", "/srv/array", dir, staying)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "a Test server") || !strings.Contains(err.Error(), "still runs on "+dir) ||
		!strings.Contains(err.Error(), "calibra clean --path /srv/array stops it and deletes the loaded data") {
		t.Errorf("a server that stays: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	LeftoverWait = time.Hour
	if err := AwaitLeftover(ctx, "Test", dir, dir, staying); err != context.Canceled {
		t.Errorf("a wait Ctrl-C ended: %v", err)
	}
}
