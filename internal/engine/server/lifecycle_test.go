package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/proc"
)

// Every way a start ends leaves the same state whichever the engine: a
// cancel or a timeout removes the socket directory, closes the log and
// leaves no process; a server that dies while starting says its last
// words (its error output, which the log keeps too); a ready one runs until Stop, which cleans up the same way.
// A cancelled start does not wait out the grace of a server that ignores
// its shutdown signal while it starts, and a server that answers that it
// never will is not waited for.
func TestEveryStartEndsCleanly(t *testing.T) {
	defer func(g time.Duration) { abandonGrace = g }(abandonGrace)
	abandonGrace = 500 * time.Millisecond
	never := func(context.Context) error { return errors.New("not yet") }
	cases := []struct {
		name    string
		script  string
		ready   func(context.Context) error
		cancel  bool
		wantErr string
		running bool // after Spawn: the server runs, its directory kept
		timeout time.Duration
		grace   time.Duration
	}{
		{name: "cancel", script: "sleep 60", ready: never, cancel: true, wantErr: context.Canceled.Error()},
		{name: "cancel, the shutdown ignored", script: "trap '' TERM; while :; do sleep 1; done", ready: never, cancel: true,
			wantErr: context.Canceled.Error(), grace: time.Hour},
		{name: "timeout", script: "echo starting >&2; sleep 60", ready: never, timeout: 300 * time.Millisecond, wantErr: "did not accept connections within 300ms: starting"},
		{name: "dies", script: "echo 'FATAL: no such setting' >&2; exit 1", ready: never, wantErr: "exited while starting: FATAL: no such setting"},
		{name: "ready", script: "sleep 60", ready: func(context.Context) error { return nil }, running: true},
		// Up but broken (a torn catalog page refuses every connection):
		// the start fails with the answer, well before its minute.
		{name: "refuses", script: "sleep 60", ready: func(context.Context) error { return Refusal(errors.New("FATAL: invalid page in block 7")) },
			wantErr: "started but refuses connections: FATAL: invalid page in block 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			group := proc.NewGroup()
			defer group.KillAll()
			p := &Process{Spec: Spec{Title: "Fake", Comm: "fake", Account: Account{UID: -1, GID: -1}, SocketPrefix: "calibra-fake-",
				Shutdown: syscall.SIGTERM, Grace: time.Second, StartTimeout: time.Minute}}
			if c.timeout > 0 {
				p.StartTimeout = c.timeout
			}
			if c.grace > 0 {
				p.Grace = c.grace
			}
			logFile := filepath.Join(t.TempDir(), "server.log")
			if err := p.Prepare(logFile); err != nil {
				t.Fatal(err)
			}
			sock := p.SocketDir
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			spawned := make(chan error, 1)
			go func() {
				spawned <- p.Spawn(ctx, group, Hooks{Command: func() *exec.Cmd { return exec.Command("sh", "-c", c.script) }, Ready: c.ready})
			}()
			var err error
			select {
			case err = <-spawned:
			case <-time.After(2 * time.Minute):
				t.Fatalf("Spawn still waits, two minutes on, for a server whose start it gave up (grace %s)", p.Grace)
			}
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("Spawn: %v, want %q", err, c.wantErr)
			}
			if c.running {
				if !p.Running() || p.SocketDir != sock || p.log == nil {
					t.Fatalf("a ready server: running %v, socket directory %q (was %q), log open %v", p.Running(), p.SocketDir, sock, p.log != nil)
				}
				if err := p.Stop(); err != nil {
					t.Fatal(err)
				}
			} else if c.name == "dies" {
				// Its caller Stops it, as after any failed start.
				_ = p.Stop()
			}
			if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) || p.SocketDir != "" || p.log != nil || p.Running() {
				t.Fatalf("after the start ended: socket directory %q stat %v, log open %v, running %v", p.SocketDir, err, p.log != nil, p.Running())
			}
			if out, _ := os.ReadFile(logFile); c.name == "dies" && !strings.Contains(string(out), "FATAL") {
				t.Fatalf("the log holds %q, not the server's words", out)
			}
		})
	}
}

// Only a test may replace Initialise (internal/testenv copies data
// directories): calibra's binary links no package that imports testing,
// so nothing in it can.
func TestCalibraLinksNoTestPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/calibra-bench/calibra/cmd/calibra").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/calibra: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || strings.HasSuffix(pkg, "test") && strings.Contains(pkg, "calibra-bench/calibra/") {
			t.Errorf("cmd/calibra links %s", pkg)
		}
	}
}
