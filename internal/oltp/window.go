// The timed window: the users driven through ramp-up, the window and
// the stop, its edges at the gates.

package oltp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// timed is what a run's driving saw of its window.
type timed struct {
	measured   bool // the window began
	t0, t1     time.Time
	start      *time.Time // the Edge hook's time at the start
	cpu0, cpu1 time.Duration
	c0s, c1s   []Counters // the servers' counters at the edges (c1s read here only past a gate)
	gates      *gates     // a split run's partitions held together at the edges
	col        *collector
	model      string
	threads    int
	userErr    error // the first user's or polling thread's
}

// drive runs the users through the ramp-up and the window, collecting
// their ticks; its error leaves no results.
func drive(ctx context.Context, tg *members, cfg RunConfig, cr *crew, ed *edges, gs *gates, out *results.OLTP, prog *progress.Printer) (*timed, error) {
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var wg sync.WaitGroup
	userErrs := make(chan error, len(cr.users)+len(cr.pollers))
	began := time.Now()
	fail := func(err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			userErrs <- err
			cancelRun()
		}
	}
	tw := &timed{gates: gs, col: &collector{recs: cr.recs, users: len(cr.users), began: began, prog: prog, out: out, tick: tickStats{lat: hist.New()}, watch: cfg.Watch,
		onTick: cfg.OnTick, log: hist.NewLog(began, "calibra oltp: latency of all transaction types per 1 s tick, tagged by phase")}}
	if cfg.Rampup <= 0 {
		// No ramp-up: every user holds at the window's start before its
		// first transaction, so no commit comes before the window.
		ed.startWindow()
	}
	tw.model, tw.threads = startUsers(runCtx, cr, ed, &wg, fail)
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	ramp := time.NewTimer(cfg.Rampup)
	defer ramp.Stop()
	var window <-chan time.Time
	phase := "rampup"
	prog.Phase("oltp run: %d users, ramp-up %s, then %s timed", cfg.Users, cfg.Rampup, cfg.Duration)
loop:
	for {
		select {
		case now := <-ticker.C:
			tw.col.collect(now, phase)
		case <-ramp.C:
			ok, err := tw.begin(runCtx, tg, cfg, cr.pool, ed)
			if err != nil {
				cancelRun()
				<-allDone
				return nil, err
			}
			if !ok {
				break loop
			}
			phase = "measure"
			out.WindowStart = tw.start
			window = time.After(cfg.Duration - time.Since(tw.t0))
		case <-window:
			break loop
		case <-runCtx.Done():
			break loop
		}
	}
	tw.t1, tw.cpu1 = time.Now(), proc.SelfCPU()
	close(ed.stop)
	<-allDone
	if cr.pool != nil {
		ls, _ := cr.pool.drain(ctx)
		ed.stopFlushes.Add(int64(flushLeases(ctx, ls, ed.flushStats)))
	}
	if err := tw.end(runCtx, tg, cfg, ed.flushStats); err != nil {
		return nil, err
	}
	if out.WindowStart != nil {
		out.WindowEnd = edge(cfg.Edge)
	}
	tw.col.collect(time.Now(), phase)
	prog.Done()
	close(userErrs)
	tw.userErr = <-userErrs
	return tw, nil
}

// begin opens the window at the ramp-up's end: every user flushes and
// holds, the counters are read, then the users go on; false when the run
// stopped first.
func (tw *timed) begin(ctx context.Context, tg *members, cfg RunConfig, pool *connPool, ed *edges) (bool, error) {
	// Pooled connections are taken back first, so every transaction
	// before the window has ended and been published when the counters
	// are read, and none of the window's begins.
	var held []lease
	if pool != nil {
		var ok bool
		if held, ok = pool.drain(ctx); !ok {
			return false, nil
		}
		flushLeases(ctx, held, ed.flushStats)
	}
	tw.t0, tw.cpu0 = time.Now(), proc.SelfCPU()
	ed.startWindow()
	if !waitGroupOrDone(&ed.startAck, ctx) {
		return false, nil
	}
	err := tw.gates.hold(ctx, "start", func() (err error) {
		if !cfg.Partition.Counters() {
			return nil
		}
		if tw.c0s, err = tg.counters(ctx, ed.flushStats); err != nil {
			return fmt.Errorf("read counters at the window start: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// The hook reads its own counters (the observers') before the users
	// go on, so they too hold exactly this edge's transactions.
	tw.start = edge(cfg.Edge)
	if pool != nil {
		pool.refill(held)
	}
	close(ed.begin)
	tw.measured = true
	return true, nil
}

// waitGroupOrDone waits for wg unless ctx ends first.
func waitGroupOrDone(wg *sync.WaitGroup, ctx context.Context) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
