// Package proc owns the child processes calibra starts: each runs in its own
// process group, is registered before it starts, and is stopped gracefully and
// then killed on every exit path, so no server outlives calibra.
package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Group is the set of live children of one calibra command.
type Group struct {
	mu    sync.Mutex
	procs map[*Proc]struct{}
}

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{procs: map[*Proc]struct{}{}} }

// Proc is one started child.
type Proc struct {
	Name    string
	cmd     *exec.Cmd
	stopSig syscall.Signal
	done    chan struct{}
	err     error
	group   *Group
}

// Start starts cmd in a process group of its own. stopSig is the signal that
// asks it to shut down cleanly (SIGINT for a PostgreSQL fast shutdown). The
// child is also told to receive stopSig if calibra dies without cleaning up.
func (g *Group) Start(name string, cmd *exec.Cmd, stopSig syscall.Signal) (*Proc, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = stopSig
	p := &Proc{Name: name, cmd: cmd, stopSig: stopSig, done: make(chan struct{}), group: g}
	g.mu.Lock()
	g.procs[p] = struct{}{}
	g.mu.Unlock()
	if err := cmd.Start(); err != nil {
		g.forget(p)
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		// Out of the group before Done: whoever waited on Done (StopAll)
		// finds the group without it.
		g.forget(p)
		close(p.done)
	}()
	return p, nil
}

func (g *Group) forget(p *Proc) {
	g.mu.Lock()
	delete(g.procs, p)
	g.mu.Unlock()
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the child's exit error, valid after Done.
func (p *Proc) Err() error { return p.err }

// Stop sends the stop signal to the child's group, waits up to grace for it to
// exit, then kills the whole group.
func (p *Proc) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, p.stopSig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.Name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	p.Kill()
	<-p.done
	return fmt.Errorf("stop %s: did not exit within %s, killed", p.Name, grace)
}

// Kill kills the child's whole process group at once.
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// StopAll stops every live child, each with the given grace period, in parallel.
func (g *Group) StopAll(grace time.Duration) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range g.live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Stop(grace); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// KillAll kills every live child at once (the second Ctrl-C).
func (g *Group) KillAll() {
	for _, p := range g.live() {
		p.Kill()
	}
}

func (g *Group) live() []*Proc {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*Proc, 0, len(g.procs))
	for p := range g.procs {
		out = append(out, p)
	}
	return out
}

// Probe readies a short program calibra runs for its answer (a --version,
// pg_config, a mount) to run in a process group of its own, as Start's
// children do: a Ctrl-C at the terminal then reaches calibra's handler,
// which stops the run in order, and not the probe, which would die and be
// taken for a broken installation.
func Probe(cmd *exec.Cmd) *exec.Cmd {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd
}
