package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/pathlock"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Spec is what a managed server's lifecycle needs to know of its engine.
type Spec struct {
	Title        string  // the engine in messages, e.g. "PostgreSQL"
	Comm         string  // the server's process in the group, e.g. "postgres"
	Account      Account // the account the server runs as
	SocketPrefix string  // its socket directories' names in SocketBase
	// Shutdown is the engine's own clean shutdown signal, sent by Halt;
	// SIGKILL follows after Grace.
	Shutdown     syscall.Signal
	Grace        time.Duration
	StartTimeout time.Duration // until it accepts connections, crash recovery included
	// LastWords picks the log lines that say why a start failed; nil
	// keeps them all.
	LastWords func(line string) bool
}

// Hooks are what each start asks of the engine: its command line, built
// from the socket directory, and whether it accepts connections yet.
type Hooks struct {
	Command func() *exec.Cmd
	// Ready reports whether the server accepts a connection; an error
	// wrapped by Refusal ends the wait at once.
	Ready func(ctx context.Context) error
}

// refusal is a server's answer that waiting will not change.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// Refusal marks a readiness error as final: the server is up and answered,
// but refuses the connection for a reason that lasts (a damaged catalog
// page after a crash), so Spawn fails with it now rather than at
// StartTimeout.
func Refusal(err error) error { return refusal{err} }

// Process is one managed server's lifecycle, whichever the engine: a
// private socket directory, locked while the server runs so that clean
// removes only dead runs' (RemoveStaleSockets); the log; the process,
// run as the account in the cgroup; its readiness; a clean stop, a kill.
// Every path that gives up on a start (cancel, timeout, early exit) goes
// through Stop, so none leaves a socket directory or an open log behind.
type Process struct {
	Spec
	SocketDir string
	Cgroup    *limits.Cgroup // holds the server when set (cache and I/O limits)
	proc      *proc.Proc
	log       *os.File
	sockLock  *pathlock.Lock
}

// Running reports whether the server process is alive; a dead one is
// forgotten, so that the next start starts it again.
func (p *Process) Running() bool {
	if p.proc == nil {
		return false
	}
	select {
	case <-p.proc.Done():
		p.proc = nil
		return false
	default:
		return true
	}
}

// PID is the server's main process, 0 when it is not running.
func (p *Process) PID() int {
	if !p.Running() {
		return 0
	}
	return p.proc.Pid()
}

// Done is closed when the server process exits; nil when none was started.
func (p *Process) Done() <-chan struct{} {
	if p.proc == nil {
		return nil
	}
	return p.proc.Done()
}

// Prepare makes the socket directory (kept across restarts, so that
// connections made from the same settings find the server again) and
// opens the log (logFile; none when empty), each unless already there.
func (p *Process) Prepare(logFile string) error {
	if p.SocketDir == "" {
		dir, err := NewSocketDir(p.SocketPrefix)
		if err != nil {
			return err
		}
		p.SocketDir = dir
		if p.sockLock, err = pathlock.Acquire(dir, "server socket"); err != nil {
			_ = p.Stop()
			return fmt.Errorf("lock the socket directory: %w", err)
		}
		if err := p.Account.Chown(dir); err != nil {
			_ = p.Stop()
			return err
		}
	}
	if logFile != "" && p.log == nil {
		f, err := openLog(logFile)
		if err != nil {
			return fmt.Errorf("open the server log: %w", err)
		}
		p.log = f
	}
	return nil
}

// openLog opens the server's log in the run directory for appending (a
// restart goes on in the same log), mode 0600: a server's log names what
// calibra keeps from other accounts (a Galera cluster's name, its
// settings). A final link is not followed and only a regular file is
// taken.
func openLog(path string) (*os.File, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	f, err := os.OpenFile(path, flags, 0o600) // safefs: the run directory's logs/ is calibra's own, made under the rule; no final link followed
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Spawn starts the server as the account, its output to the log, and
// waits until it accepts connections. On a cancel or a timeout it Stops
// (the socket directory removed, the log closed) and returns why; a
// server that exits while starting returns its last words.
func (p *Process) Spawn(ctx context.Context, group *proc.Group, h Hooks) error {
	cmd := h.Command()
	p.Account.Credentials(cmd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	p.Cgroup.Prepare(cmd.SysProcAttr)
	var tail Tail
	if p.log != nil {
		cmd.Stdout, cmd.Stderr = p.log, io.MultiWriter(p.log, &tail)
	} else {
		cmd.Stdout, cmd.Stderr = &tail, &tail
	}
	sp, err := group.Start(p.Comm, cmd, p.Shutdown)
	if err != nil {
		return err
	}
	p.proc = sp
	if err := p.Cgroup.Attach(sp.Pid()); err != nil {
		_ = p.Stop()
		return err
	}
	deadline := time.Now().Add(p.StartTimeout)
	for {
		err := h.Ready(ctx)
		if err == nil {
			return nil
		}
		if errors.As(err, new(refusal)) {
			_ = p.abandon()
			return fmt.Errorf("the %s server started but refuses connections: %w", p.Title, err)
		}
		select {
		case <-sp.Done():
			p.proc = nil
			return fmt.Errorf("the %s server exited while starting: %s", p.Title, strings.TrimSpace(tail.Matching(p.LastWords)))
		case <-ctx.Done():
			_ = p.abandon()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.abandon()
			return fmt.Errorf("the %s server did not accept connections within %s: %s", p.Title, p.StartTimeout, strings.TrimSpace(tail.Matching(p.LastWords)))
		}
	}
}

// abandonGrace bounds the clean shutdown of a server whose start was given
// up (a cancel, a timeout). It served no connection, so nothing calibra
// did is in it, and a server still starting may ignore its shutdown
// signal: a Galera node cancelled while bootstrapping did, one start in
// four, until the SIGKILL five minutes later, so Ctrl-C took five minutes.
// Killed, it is a crash during startup, which the engine's recovery
// undoes at the next start. A variable, so a test need not wait it out.
var abandonGrace = 10 * time.Second

// abandon is Stop with at most abandonGrace for the clean shutdown.
func (p *Process) abandon() error {
	grace := p.Grace
	p.Grace = min(grace, abandonGrace)
	defer func() { p.Grace = grace }()
	return p.Stop()
}

// Halt shuts the server down (its clean shutdown, then SIGKILL after the
// grace period) and keeps the socket directory and log for a restart.
func (p *Process) Halt() error {
	if p.proc == nil {
		return nil
	}
	err := p.proc.Stop(p.Grace)
	p.proc = nil
	return err
}

// Kill kills the server at once (SIGKILL to its process group), as a
// crash does, and removes its socket directory; its files stay as the
// crash left them.
func (p *Process) Kill() {
	if p.proc != nil {
		p.proc.Kill()
		<-p.proc.Done()
		p.proc = nil
	}
	_ = p.Stop()
}

// Stop shuts the server down, removes its socket directory and closes
// its log. Safe to call more than once.
func (p *Process) Stop() error {
	err := p.Halt()
	if p.SocketDir != "" {
		// By handle, inside the socket base, which is calibra's own.
		_ = safefs.RemoveAll(filepath.Dir(p.SocketDir), filepath.Base(p.SocketDir))
		p.SocketDir = ""
	}
	p.sockLock.Release()
	p.sockLock = nil
	if p.log != nil {
		p.log.Close()
		p.log = nil
	}
	return err
}

// InitialisedMarker is written in a data directory once its engine's
// initialisation succeeded: one without it is the remains of an
// interrupted one, to be made anew.
const InitialisedMarker = "calibra-initialised"

// MarkInitialised writes the marker of a complete initialisation in
// dirs[0], once what the engine wrote there is on the storage. The
// engines initialise without a flush per file (initdb --no-sync,
// mariadbd's --debug-no-sync: MariaDB's bootstrap flushes 964 times, 18 s
// of a lab beside the test suite), so one syncfs of each directory's file
// system (initdb's own --sync-method=syncfs) makes it durable first.
func MarkInitialised(content []byte, dirs ...string) error {
	if err := limits.SyncFS(dirs...); err != nil {
		return err
	}
	// In the account's directory: made anew, never through a link.
	return WriteNew(filepath.Join(dirs[0], InitialisedMarker), content, 0o644)
}

// Initialised reports whether dataDir has been fully initialised.
func Initialised(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, InitialisedMarker))
	return err == nil
}

// An Initialiser makes a new data directory: Run(dir) initialises dir
// (initdb; mariadb-install-db and the redo log's first write) as Program
// with Args (all but the directory) does. Outside is a directory it also
// writes into (a WAL or redo log on storage of its own), "" when all it
// writes stays in dir.
type Initialiser struct {
	Program string
	Args    []string
	Outside string
	Run     func(dir string) error
}

// Initialise makes dataDir, an empty directory of a's, a new data
// directory: calibra runs initialiser into it. Its tests (internal/testenv) copy
// one run per program, arguments and account instead, as the suite starts
// some 120 data directories; only a package that imports testing may
// replace it, and cmd/calibra links none (TestCalibraLinksNoTestPackage).
var Initialise = func(ctx context.Context, a Account, group *proc.Group, dataDir string, initialiser Initialiser) error {
	return initialiser.Run(dataDir)
}

// A SwapHook is called at the end of each step of a template save or a
// reset: a test cuts the swap short there, as a signal would. Each target
// has its own, so that tests of other targets run beside it; nil does
// nothing.
type SwapHook func(at string)

// Step calls the hook, if any, at the end of step at.
func (h SwapHook) Step(at string) {
	if h != nil {
		h(at)
	}
}
