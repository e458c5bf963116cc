package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// Group is a target of several servers driven together, each member an
// engine of its own. SharedData says whether the members serve one
// database (the nodes of a Galera cluster: the data are built once and the
// database's order counters read on one member) or each its own (instances
// on the same storage: each built, driven and counted apart, then summed).
// A workload that cannot spread over members refuses a Group.
type Group interface {
	Engine
	Members() []Engine
	SharedData() bool
}

// MembersOf is e's members when it is a Group, else e alone.
func MembersOf(e Engine) []Engine {
	if g, ok := e.(Group); ok {
		return g.Members()
	}
	return []Engine{e}
}

// RefuseGroup is the input error of a workload that runs on one server
// only, given a Group.
func RefuseGroup(e Engine, workload string) error {
	if g, ok := e.(Group); ok && len(g.Members()) > 1 {
		return fault.Input("leave the step out, or run it on a single server", "%s runs on one server, and this target has %d", workload, len(g.Members()))
	}
	return nil
}

// Instances is N independent instances of one engine, each with its own
// data (--instances): started and stopped together, the first one's
// description standing for all with the count added.
type Instances struct{ members []Engine }

// NewInstances groups members, which must be of one engine.
func NewInstances(members []Engine) *Instances { return &Instances{members: members} }

func (g *Instances) Members() []Engine { return g.members }
func (g *Instances) SharedData() bool  { return false }
func (g *Instances) Name() string      { return g.members[0].Name() }
func (g *Instances) Local() *Local     { return g.members[0].Local() }

// Start starts every instance in turn; one that fails stops the start
// (Stop stops those started).
func (g *Instances) Start(ctx context.Context, group *proc.Group) (bool, error) {
	initialised := false
	for i, m := range g.members {
		init, err := m.Start(ctx, group)
		initialised = initialised || init
		if err != nil {
			return initialised, fmt.Errorf("instance %d of %d: %w", i+1, len(g.members), err)
		}
	}
	return initialised, nil
}

// Stop stops every instance, whatever one of them answers.
func (g *Instances) Stop() error {
	var errs []error
	for i, m := range g.members {
		if err := m.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("instance %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// Describe is the first instance's, its target naming them all.
func (g *Instances) Describe() results.Engine {
	d := g.members[0].Describe()
	targets := make([]string, len(g.members))
	for i, m := range g.members {
		targets[i] = m.Describe().Target
	}
	d.Target = strings.Join(targets, ", ")
	d.Instances = len(g.members)
	return d
}

// SetServerLog gives instance k its own log beside path (server-k.log).
func (g *Instances) SetServerLog(path string) {
	for i, m := range g.members {
		m.SetServerLog(MemberLog(path, i+1))
	}
}

// MemberLog is member k's (from 1) server log beside path: server.log
// becomes server-k.log.
func MemberLog(path string, k int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), k, ext)
}

// Restart restarts every instance cold; the page cache counts as dropped
// only if every restart dropped it.
func (g *Instances) Restart(ctx context.Context, group *proc.Group) (bool, error) {
	dropped := true
	for i, m := range g.members {
		r, ok := m.(ColdRestarter)
		if !ok {
			return false, fault.Input("drop the cold restart", "%s", NotSupported(m, "a cold restart"))
		}
		d, err := r.Restart(ctx, group)
		if err != nil {
			return false, fmt.Errorf("instance %d: %w", i+1, err)
		}
		dropped = dropped && d
	}
	return dropped, nil
}

// resetters are the instances' Resetters, or the sentence of the first
// instance that has none.
func (g *Instances) resetters() ([]Resetter, error) {
	rs := make([]Resetter, len(g.members))
	for i, m := range g.members {
		r, ok := m.(Resetter)
		if !ok {
			return nil, fault.Input("drop --reset", "%s", NotSupported(m, "a reset to the loaded template"))
		}
		rs[i] = r
	}
	return rs, nil
}

// SaveTemplate keeps each instance's loaded data; the note is the first's.
func (g *Instances) SaveTemplate(ctx context.Context, note string) (string, error) {
	rs, err := g.resetters()
	if err != nil {
		return "", err
	}
	var first string
	for i, r := range rs {
		name, err := r.SaveTemplate(ctx, note)
		if err != nil {
			return "", fmt.Errorf("instance %d: %w", i+1, err)
		}
		if i == 0 {
			first = name
		}
	}
	return first, nil
}

// TemplateNote is the first instance's note; a template exists only when
// every instance keeps one.
func (g *Instances) TemplateNote(ctx context.Context) (string, bool, error) {
	rs, err := g.resetters()
	if err != nil {
		return "", false, err
	}
	var first string
	for i, r := range rs {
		note, exists, err := r.TemplateNote(ctx)
		if err != nil || !exists {
			return "", false, err
		}
		if i == 0 {
			first = note
		}
	}
	return first, true, nil
}

// RestoreTemplate puts every instance's loaded data back.
func (g *Instances) RestoreTemplate(ctx context.Context) error {
	rs, err := g.resetters()
	if err != nil {
		return err
	}
	for i, r := range rs {
		if err := r.RestoreTemplate(ctx); err != nil {
			return fmt.Errorf("instance %d: %w", i+1, err)
		}
	}
	return nil
}
