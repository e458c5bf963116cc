package oltp

import (
	"context"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// Gater is a Control whose server can hold the partitions of a split run
// at a window edge until the counter partition has read the counters
// there: then the database's count at each edge holds every partition's
// commits before it and none after, and the merged NOPM is exactly the
// New-Orders the database gained. Gates are named; each session passes
// or shuts them on its own connection.
type Gater interface {
	// ShutGate shuts the named gate, held by this session until OpenGate.
	ShutGate(ctx context.Context, gate string) error
	// AtGate counts the sessions waiting at the named gate.
	AtGate(ctx context.Context, gate string) (int, error)
	// OpenGate lets the sessions waiting at the named gate through.
	OpenGate(ctx context.Context, gate string) error
	// PassGate returns once the named gate is open (at once if it is),
	// or with ctx's error, and the statements it made before it waited
	// (each adding GateXacts to Counters.Xacts).
	PassGate(ctx context.Context, gate string) (before int64, err error)
	// GateXacts is what each of these calls adds to Counters.Xacts.
	GateXacts() int64
}

// gateWait is how long a partition waits at an edge for the others: their
// clocks' skew at --start-at, and at the end the slowest one's last
// transactions.
const gateWait = 30 * time.Second

// gates hold a split run's partitions together at its window edges
// through the database: the counter partition shuts a gate for each edge
// before --start-at, waits at each edge until every other partition waits
// at its gate, reads the counters, and opens it.
type gates struct {
	g     Gater
	wait  time.Duration // gateWait
	p     Partition
	run   string   // the gates' names' stem, the same in every partition
	notes []string // why an edge was not held, for the results
	// endBefore is what another partition's pass of the end gate did
	// before it waited: inside the window, as the counter partition reads
	// only once every partition waits.
	endBefore int64
	// calls is the counter partition's statements inside the window: the
	// start gate's opening, the polls for the others at the end, and the
	// end read's flush.
	calls int64
}

// newGates are the gates of a run split with --start-at, or nil: a whole
// run, one without --start-at (whose partitions may not all run at
// once), or a server with no gates (say why in the results).
func newGates(ctl Control, cfg RunConfig) (*gates, string) {
	if cfg.Partition.Whole() || cfg.StartAt.IsZero() {
		return nil, ""
	}
	g, ok := ctl.(Gater)
	if !ok {
		return nil, "this server cannot hold the partitions at the window edges: the merged NOPM counts what the others committed while the counter partition read the counters"
	}
	return &gates{g: g, wait: gateWait, p: cfg.Partition, run: fmt.Sprintf("calibra-oltp-%d-%d", cfg.StartAt.UnixNano(), cfg.Partition.Of)}, ""
}

func (gs *gates) name(edge string) string { return gs.run + "-" + edge }

// shut shuts the start's and the end's gates: the counter partition does
// it before --start-at, before any other partition can reach them.
func (gs *gates) shut(ctx context.Context) error {
	if gs == nil || !gs.p.Counters() {
		return nil
	}
	for _, e := range []string{"start", "end"} {
		if err := gs.g.ShutGate(ctx, gs.name(e)); err != nil {
			return fmt.Errorf("shut the partitions' gate at the window %s: %w", e, err)
		}
	}
	return nil
}

// hold holds this partition at the edge's gate: the counter partition
// waits for every other, runs read, then opens the gate; the others wait
// until it opens. A partition missing for gateWait is noted, and the run
// goes on without it.
func (gs *gates) hold(ctx context.Context, edge string, read func() error) error {
	if gs == nil {
		return read()
	}
	name := gs.name(edge)
	wctx, cancel := context.WithTimeout(ctx, gs.wait)
	defer cancel()
	if !gs.p.Counters() {
		before, err := gs.g.PassGate(wctx, name)
		if edge == "end" {
			gs.endBefore = before
		}
		if err != nil && ctx.Err() == nil {
			gs.notes = append(gs.notes, fmt.Sprintf("the counter partition, 1/%d, did not open the window %s's gate within %s: %v", gs.p.Of, edge, gs.wait, err))
		}
		return read()
	}
	at, polls, err := gs.waitAll(wctx, name)
	if edge == "end" {
		gs.calls += polls
	}
	if err != nil && ctx.Err() == nil {
		gs.notes = append(gs.notes, fmt.Sprintf("%d of the %d other partitions reached the window %s within %s (%v): the counters there may miss or count some of their commits", at, gs.p.Of-1, edge, gs.wait, err))
	}
	if err := read(); err != nil {
		return err
	}
	if err := gs.g.OpenGate(ctx, name); err != nil {
		return fmt.Errorf("open the partitions' gate at the window %s: %w", edge, err)
	}
	if edge == "start" {
		gs.calls++
	}
	return nil
}

// waitAll waits until every other partition waits at the gate; it
// returns how many did and the polls it made.
func (gs *gates) waitAll(ctx context.Context, name string) (at int, polls int64, err error) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		at, err = gs.g.AtGate(ctx, name)
		polls++
		if err != nil || at >= gs.p.Of-1 {
			return at, polls, err
		}
		select {
		case <-ctx.Done():
			return at, polls, ctx.Err()
		case <-tick.C:
		}
	}
}

// own is what the counter partition's gate calls added to the counters
// inside the window (the others' own commits there are in their results,
// OwnXacts, which the merge takes out).
func (gs *gates) own() int64 {
	if gs == nil || !gs.p.Counters() {
		return 0
	}
	return gs.calls * gs.g.GateXacts()
}

// end holds a split run's partitions at the window's end, once this
// one's users have stopped: the counter partition reads the counters there
// after every other's last commit, flushing its own statistics first (its
// polls at the gate, the start gate's opening), so the flush's is one more
// commit of its own in the window. Without gates, or on a run cut short,
// serverFigures reads them.
func (tw *timed) end(ctx context.Context, tg *members, cfg RunConfig, flush bool) error {
	if tw.gates == nil || !tw.measured || ctx.Err() != nil {
		return nil
	}
	return tw.gates.hold(ctx, "end", func() (err error) {
		if !cfg.Partition.Counters() {
			return nil
		}
		if flush {
			tw.gates.calls++
		}
		if tw.c1s, err = tg.counters(ctx, flush); err != nil {
			return fmt.Errorf("read counters at the window end: %w", err)
		}
		return nil
	})
}

// record says in the results whether the edges were held (a run that
// went to its end with no partition missing), and, for a partition other
// than the first, its own commits inside the window: its pass of the
// start gate, which returns after the counters were read, its users'
// statistics flushes at the end, and what its pass of the end gate did
// before it waited there.
func (gs *gates) record(out *results.OLTP, ended bool, stopFlushes int64) {
	if gs == nil || out.Partition == nil {
		return
	}
	out.Warnings = append(out.Warnings, gs.notes...)
	out.Partition.EdgesHeld = len(gs.notes) == 0 && ended
	if out.Partition.EdgesHeld && !gs.p.Counters() {
		out.Partition.OwnXacts = (1+gs.endBefore)*gs.g.GateXacts() + stopFlushes
	}
}
