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
		return fault.Input("leave it out, or run it without --instances", "%s runs on one server; this target has %d", workload, len(g.Members()))
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
	ext := filepath.Ext(path)
	for i, m := range g.members {
		m.SetServerLog(fmt.Sprintf("%s-%d%s", strings.TrimSuffix(path, ext), i+1, ext))
	}
}
