// The users of a timed run: their sessions, connections and start.

package oltp

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// crew is a run's users with their connections, and how they are driven.
type crew struct {
	users    []*user
	sessions []Session
	recs     []*recorder
	// pool is the connections the users' goroutines share; nil when each
	// has its own, or on the polling driver, whose threads hold them.
	pool    *connPool
	pollers []*poller // the polling threads; none with a goroutine a user
	// heap0 and heap1 are the Go heap in use (after a GC) before and after
	// the users, connections and threads were made.
	heap0, heap1 uint64
}

func (cr *crew) close() {
	for _, s := range cr.sessions {
		s.Close()
	}
}

// connect opens the users' connections and sets up how they will be
// driven: on polling threads when every session can be, else a goroutine
// each; it measures the heap all that took.
func connect(ctx context.Context, tg *members, cfg RunConfig, driven []int, bi *BuildInfo, ed *edges) (*crew, error) {
	heap0 := liveHeap()
	cr, err := newUsers(ctx, tg, cfg, driven, bi, ed)
	if err != nil {
		return cr, err
	}
	conns := make([]lease, len(cr.sessions))
	for i, s := range cr.sessions {
		conns[i] = lease{s, cr.recs[i], tg.at(i)}
	}
	if cfg.Driver != DriverGoroutines {
		cr.pollers = newPollers(cr.users, conns, cfg.pooled(), cfg.DriverThreads, ed)
	}
	if cr.pollers != nil {
		cr.pool = nil // the threads lend the connections and flush them at the edges
	}
	cr.heap0, cr.heap1 = heap0, liveHeap()
	return cr, nil
}

// liveHeap is the Go heap still in use after two collections: the second
// frees what the first only finalized (a closed connection's file).
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// memPerUserKB is the heap connecting users took, a user, in KB (two
// decimals); with a reason instead when the samples cannot say: the heap
// is the whole process's, and other work (an observer, another run in
// the same process) can free more between them than the users took.
func memPerUserKB(heap0, heap1 uint64, users int) (float64, string) {
	switch {
	case users <= 0:
		return 0, "no user connected"
	case heap1 <= heap0:
		return 0, fmt.Sprintf("the process's Go heap did not grow while the users connected (%d bytes before, %d after, each after a GC): other work in the process freed more than they took", heap0, heap1)
	}
	kb := results.Round(float64(heap1-heap0)/float64(users)/1024, 2)
	if kb <= 0 {
		return 0, fmt.Sprintf("the process's Go heap grew by %d bytes while %d users connected, under 0.01 KB a user: other work in the process freed about what they took", heap1-heap0, users)
	}
	return kb, ""
}

// startUsers starts the users under wg, failing the run through fail:
// on the polling driver's threads, or a goroutine each; each acknowledges
// the window's start for its connections (or, with goroutines, its
// users). It returns the driver model and the polling threads.
func startUsers(ctx context.Context, cr *crew, ed *edges, wg *sync.WaitGroup, fail func(error)) (string, int) {
	if cr.pollers == nil {
		ed.startAck.Add(len(cr.users))
		for _, u := range cr.users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fail(u.run(ctx))
			}()
		}
		return DriverGoroutines, 0
	}
	ed.startAck.Add(len(cr.sessions))
	// A polling thread keeps its P while it waits in the kernel, so the
	// runtime gets one more P for each: the collector, the edges and the
	// garbage collector keep the cores calibra had.
	addProcs(len(cr.pollers))
	var polls sync.WaitGroup
	for _, pl := range cr.pollers {
		polls.Add(1)
		go func() {
			defer polls.Done()
			fail(pl.run(ctx))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		polls.Wait()
		addProcs(-len(cr.pollers))
	}()
	return DriverPolling, len(cr.pollers)
}

// procsMu makes addProcs's changes add up when runs share the process.
var procsMu sync.Mutex

// addProcs adds n to GOMAXPROCS (n < 0 takes away).
func addProcs(n int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
}

// newUsers connects the users, each to a connection of its own or, with
// fewer connections than users, to a pool they share as terminals; it
// binds each to its home warehouse (and district, as a spec terminal, when
// keying and thinking are on). The crew has every session it opened and
// the recorders of the users' outcomes: one a user, or one a connection,
// with the pool they share (nil when each has its own).
func newUsers(ctx context.Context, tg *members, cfg RunConfig, driven []int, bi *BuildInfo, ed *edges) (*crew, error) {
	conns := cfg.Users
	var pool *connPool
	if cfg.pooled() {
		conns = cfg.Connections
	}
	sessions, err := openSessions(ctx, tg.ds, cfg.Mode, conns)
	if err != nil {
		return &crew{sessions: sessions}, fmt.Errorf("connect the users: %w", err)
	}
	recs := make([]*recorder, len(sessions))
	for i := range recs {
		recs[i] = newRecorder(cfg.pooled(), cfg.KeyingThinking > 0 || cfg.RatePerUser > 0, cfg.Watch != nil)
	}
	if cfg.pooled() {
		pool = newConnPool(sessions, recs, tg.at)
	}
	consts := tpcc.RunConstants(tpcc.NewRand(cfg.Seed, 0xC1), tpcc.Constants{CLast: bi.CLastLoad})
	users := make([]*user, cfg.Users)
	for i, g := range driven {
		// Seeded by its index in the whole run, so a partition's users are
		// the same as in one process.
		rng := tpcc.NewRand(cfg.Seed, 0x5E, uint64(g))
		h := tg.homeIndex(g)
		term := Terminal{W: h%cfg.Warehouses + 1, Warehouses: cfg.Warehouses, C: consts, Rng: rng, Uniform: cfg.Profile == ProfileHammerDB}
		if cfg.KeyingThinking > 0 {
			term.D = (h/cfg.Warehouses)%tpcc.DistrictsPerWarehouse + 1
		}
		u := &user{pool: pool, term: term, deck: NewDeck(rng, cfg.Profile), keying: cfg.KeyingThinking, edges: ed}
		if pool == nil {
			u.own = lease{sessions[i], recs[i], tg.at(i)}
		}
		switch {
		case cfg.RatePerUser > 0:
			// Users start spread over one interval, not in lockstep.
			u.interval = time.Duration(float64(time.Second) / cfg.RatePerUser)
			u.next = time.Now().Add(time.Duration(unitFloat(rng) * float64(u.interval)))
		case cfg.KeyingThinking > 0:
			// Terminals start spread over a mean cycle of keying and
			// thinking: started together, 100,000 of them would key
			// their first transactions in a few bursts.
			u.next = time.Now().Add(time.Duration(unitFloat(rng) * float64(MeanCycle(cfg.Profile, cfg.KeyingThinking))))
		}
		users[i] = u
	}
	return &crew{users: users, sessions: sessions, recs: recs, pool: pool}, nil
}

// waitStart shuts a split run's gates (the counter partition, before any
// other can reach them), then holds the connected users until at; an open
// loop's schedules and the terminals' spread starts move with the wait, so
// they do not start with a burst of late transactions.
func waitStart(ctx context.Context, at time.Time, users []*user, gs *gates, prog *progress.Printer) error {
	if err := gs.shut(ctx); err != nil {
		return err
	}
	wait := time.Until(at)
	if wait <= 0 {
		return fault.Input("give a --start-at further ahead: every partition must have connected its users by then",
			"--start-at %s passed while the users connected", at.UTC().Format(time.RFC3339Nano))
	}
	prog.Phase("oltp run: users connected, waiting %s for --start-at %s", wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, u := range users {
		if u.paced() {
			u.next = u.next.Add(wait)
		}
	}
	return nil
}

// flushLeases makes the server publish the statistics of pooled
// connections no user holds (Control.StatsFlush); it returns the flushes
// made, each a transaction of its own.
func flushLeases(ctx context.Context, ls []lease, flush bool) int {
	if !flush {
		return 0
	}
	for _, l := range ls {
		_ = l.sess.FlushStats(ctx)
	}
	return len(ls)
}

// openSessions opens n sessions, 16 at a time, session i on server
// i mod len(ds); on failure it returns the error with the sessions it
// opened.
func openSessions(ctx context.Context, ds []Dialect, mode Mode, n int) ([]Session, error) {
	sessions := make([]Session, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sess, err := ds[i%len(ds)].Session(ctx, mode)
			if err != nil {
				errs <- err
				return
			}
			sessions[i] = sess
		}()
	}
	wg.Wait()
	close(errs)
	opened := sessions[:0]
	for _, s := range sessions {
		if s != nil {
			opened = append(opened, s)
		}
	}
	return opened, <-errs
}
