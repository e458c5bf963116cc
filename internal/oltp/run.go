package oltp

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// RunConfig is a timed run.
type RunConfig struct {
	Warehouses     int // 0: as built
	Users          int
	Mode           Mode
	KeyingThinking float64 // scale of the spec's keying and think times; 0 is off
	// RatePerUser, when above 0, makes the run an open loop: each user
	// starts a transaction every 1/RatePerUser seconds on a fixed schedule,
	// and latency runs from the scheduled start.
	RatePerUser float64
	Rampup      time.Duration
	Duration    time.Duration
	// Connections, when above 0 and below Users, makes the users terminals
	// served by that many connections: a transaction waits for a free one,
	// and its latency counts the wait from its terminal's intended start.
	Connections int
	Seed        uint64
	// Profile is whose mix and input draws to follow; "" is the spec's.
	Profile Profile
	// Edge, when set, is called at the two edges of the timed window, once
	// the server's counters hold exactly that edge's transactions; it
	// returns the time of the observers' reading.
	Edge func() time.Time
	// Partition is this process's share of a run split over several
	// (Users is then the whole run's); the zero value is the whole run.
	Partition Partition
	// StartAt, when set, is the instant the users start, after connecting:
	// processes sharing it run their ramp-up and window at the same times.
	StartAt time.Time
	// DriverThreads is the polling driver's threads, each polling its
	// share of the users; 0 is one for every 64 users, at most one for
	// each core calibra may use (GOMAXPROCS).
	DriverThreads int
}

// pooled says the users share fewer connections than there are users.
func (c RunConfig) pooled() bool { return c.Connections > 0 && c.Connections < c.Users }

// ErrNotBuilt means the target holds no complete build.
var ErrNotBuilt = errors.New("no TPC-C-like schema is built")

// MaxUsersPerWarehouse is the specification's ten terminals per warehouse,
// binding when keying and think times are on.
const MaxUsersPerWarehouse = 10

// Tick is one second of the run as the client saw it (live figures, for
// the timeline; the window's metrics come from its edges).
type Tick struct {
	At         time.Time
	ElapsedS   float64
	Phase      string
	TPM        float64 // completed transactions per minute
	NOPMClient float64 // committed New-Orders per minute
	ARTMs      float64
	P90Ms      float64
	Errors     int64
	Users      int
}

// Record is the run's timeline: a tick a second, and each tick's latency
// histogram (all transaction types) as an HdrHistogram interval log; and
// Window, a log of one histogram per transaction type over exactly the
// timed window, from which its percentiles were taken (so that partitions
// can be merged).
type Record struct {
	Ticks      []Tick
	Histograms []byte
	Window     []byte
}

// WindowLogComment heads a window log.
const WindowLogComment = "calibra oltp: latency of each transaction type over the timed window, tagged by type"

// Run drives a timed run: all users start together, run through the
// ramp-up, then the timed window; metrics cover the window only.
func Run(ctx context.Context, e engine.Engine, cfg RunConfig, prog *progress.Printer) (*results.OLTP, *Record, error) {
	tg, err := openMembers(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	defer tg.close()
	bi, err := Built(ctx, e)
	if err != nil {
		return nil, nil, err
	}
	if bi == nil {
		return nil, nil, ErrNotBuilt
	}
	if len(tg.ds) > 1 {
		switch {
		case !cfg.Partition.Whole():
			return nil, nil, fault.Input("drop --partition, or run each server apart", "--partition splits the load over processes, and this target has %d servers", len(tg.ds))
		case cfg.pooled():
			return nil, nil, fault.Input("drop --connections", "--connections pools one server's connections, and this target has %d servers", len(tg.ds))
		case cfg.Users < len(tg.ds):
			return nil, nil, fault.Input(fmt.Sprintf("give --users %d or more", len(tg.ds)), "%d users leave some of the %d servers without load", cfg.Users, len(tg.ds))
		}
	}
	if cfg.Warehouses == 0 {
		cfg.Warehouses = bi.Warehouses
	}
	if cfg.Warehouses != bi.Warehouses {
		return nil, nil, fault.Input(fmt.Sprintf("pass --warehouses %d, or rebuild with 'calibra oltp build --rebuild --warehouses %d'", bi.Warehouses, cfg.Warehouses),
			"the schema holds %d warehouses but the run asks for %d", bi.Warehouses, cfg.Warehouses)
	}
	if err := CheckUsers(cfg.Users, cfg.Warehouses, cfg.KeyingThinking); err != nil {
		return nil, nil, err
	}
	if err := CheckPartition(cfg.Partition, cfg.Users, cfg.Warehouses); err != nil {
		return nil, nil, err
	}
	// From here on Users is this process's share.
	driven, usersTotal := cfg.Partition.Users(cfg.Users, cfg.Warehouses), cfg.Users
	cfg.Users = len(driven)
	if cfg.Profile == "" {
		cfg.Profile = ProfileSpec
	}
	flushStats, statsNote, err := tg.ctls[0].StatsFlush(ctx)
	if err != nil {
		return nil, nil, err
	}

	out := &results.OLTP{Workload: Workload, Warehouses: cfg.Warehouses, Users: cfg.Users, Mode: string(cfg.Mode),
		KeyingThinking: false, RampupS: cfg.Rampup.Seconds(), LatencyBasis: "service", Profile: string(cfg.Profile), Missing: map[string]string{}}
	if cfg.KeyingThinking > 0 {
		out.KeyingThinking = cfg.KeyingThinking
		out.LatencyBasis = "response"
	}
	if cfg.RatePerUser > 0 {
		out.RatePerUser = cfg.RatePerUser
		out.LatencyBasis = "response"
	}
	ed := newEdges(flushStats)
	if statsNote != "" {
		out.Notes = append(out.Notes, statsNote)
	}
	if !cfg.Partition.Whole() {
		out.Partition = &results.Partition{Index: cfg.Partition.Index, Of: cfg.Partition.Of, UsersTotal: usersTotal,
			HomeWarehouses: cfg.Partition.Warehouses(cfg.Warehouses), Counters: cfg.Partition.Counters()}
		if !cfg.StartAt.IsZero() {
			at := cfg.StartAt.UTC()
			out.Partition.StartAt = &at
		}
	}

	prog.Phase("oltp run: connecting %d users", cfg.Users)
	var heap0, heap1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&heap0)
	users, sessions, recs, pool, err := newUsers(ctx, tg, cfg, driven, bi, ed)
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	if err != nil {
		return nil, nil, err
	}
	runtime.GC()
	runtime.ReadMemStats(&heap1)
	if cfg.pooled() {
		out.Connections = cfg.Connections
	}

	if !cfg.StartAt.IsZero() {
		if err := waitStart(ctx, cfg.StartAt, users, prog); err != nil {
			return nil, nil, err
		}
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var wg sync.WaitGroup
	userErrs := make(chan error, len(users))
	ed.startAck.Add(len(users))
	began := time.Now()
	fail := func(err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			userErrs <- err
			cancelRun()
		}
	}
	model, threads := startUsers(runCtx, users, cfg, ed, &wg, fail)
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	col := &collector{recs: recs, users: len(users), began: began, prog: prog, out: out, tick: tickStats{lat: hist.New()},
		log: hist.NewLog(began, "calibra oltp: latency of all transaction types per 1 s tick, tagged by phase")}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	ramp := time.NewTimer(cfg.Rampup)
	defer ramp.Stop()
	var window <-chan time.Time
	var t0 time.Time
	var c0s []Counters
	var cpu0, cpu1 time.Duration
	phase := "rampup"
	prog.Phase("oltp run: %d users, ramp-up %s, then %s timed", cfg.Users, cfg.Rampup, cfg.Duration)
loop:
	for {
		select {
		case now := <-ticker.C:
			col.collect(now, phase)
		case <-ramp.C:
			// Pooled connections are taken back first, so every
			// transaction before the window has ended and been published
			// when the counters are read, and none of the window's begins.
			var held []lease
			if pool != nil {
				var ok bool
				if held, ok = pool.drain(runCtx); !ok {
					break loop
				}
				flushLeases(runCtx, held, ed.flushStats)
			}
			t0 = time.Now()
			cpu0 = proc.SelfCPU()
			close(ed.start)
			if !waitGroupOrDone(&ed.startAck, runCtx) {
				break loop
			}
			if cfg.Partition.Counters() {
				if c0s, err = tg.counters(runCtx, ed.flushStats); err != nil {
					cancelRun()
					<-allDone
					return nil, nil, fmt.Errorf("read counters at the window start: %w", err)
				}
			}
			if pool != nil {
				pool.refill(held)
			}
			close(ed.begin)
			phase = "measure"
			out.WindowStart = edge(cfg.Edge)
			window = time.After(cfg.Duration - time.Since(t0))
		case <-window:
			break loop
		case <-runCtx.Done():
			break loop
		}
	}
	t1 := time.Now()
	cpu1 = proc.SelfCPU()
	close(ed.stop)
	<-allDone
	if pool != nil {
		ls, _ := pool.drain(ctx)
		ed.stopFlushes.Add(int64(flushLeases(ctx, ls, ed.flushStats)))
	}
	if out.WindowStart != nil {
		out.WindowEnd = edge(cfg.Edge)
	}
	col.collect(time.Now(), phase)
	prog.Done()
	close(userErrs)
	userErr := <-userErrs

	interrupted := ctx.Err() != nil
	if t0.IsZero() || phase != "measure" {
		for _, k := range []string{"nopm", "tpm_db", "tpm_client", "art_ms"} {
			out.Missing[k] = "the run stopped before the timed window began"
		}
		out.Transactions = map[string]results.TxStats{}
		out.MixPct = map[string]float64{}
		return out, col.record(), firstErr(userErr, ctx.Err())
	}
	win := t1.Sub(t0)
	out.DurationS = win.Seconds()
	if interrupted || userErr != nil {
		reason := "the run was interrupted"
		if userErr != nil {
			reason = "the run failed"
		}
		out.Missing["nopm"] = reason + ": the server's counters at the cut are not exact"
		out.Missing["tpm_db"] = out.Missing["nopm"]
		out.Missing["checkpoints_in_window"] = reason + ": the server's counters were not read at the cut"
	} else if !cfg.Partition.Counters() {
		why := fmt.Sprintf("the database's counters are read by the counter partition, 1/%d; 'calibra merge' takes them from there", cfg.Partition.Of)
		for _, k := range []string{"nopm", "tpm_db", "checkpoints_in_window"} {
			out.Missing[k] = why
		}
	} else {
		c1s, err := tg.counters(ctx, false)
		if err != nil {
			return nil, nil, fmt.Errorf("read counters at the window end: %w", err)
		}
		c0, c1 := tg.sum(c0s), tg.sum(c1s)
		n := nopm(c0, c1, win)
		// calibra's own commits inside the window: each server's start
		// read (and its flush) and the users' flush calls at the end edge.
		perRead := int64(1)
		if ed.flushStats {
			perRead++
		}
		own := perRead*int64(len(c0s)) + ed.stopFlushes.Load()
		tpm := tpmDB(c0, c1, own, win)
		out.Instances = tg.figures(c0s, c1s, perRead, ed.flushStats, len(users), win)
		out.NOPM, out.TPMDB = &n, &tpm
		noteAutovacuum(out, c0, c1)
		if c1.NoCheckpoints != "" {
			out.Missing["checkpoints_in_window"] = c1.NoCheckpoints
		} else {
			noteCheckpoints(out, c1.Checkpoints-c0.Checkpoints)
		}
		switch {
		case cfg.KeyingThinking == 1 && cfg.Profile == ProfileSpec:
			e := efficiencyPct(n, cfg.Warehouses)
			out.EfficiencyPct = &e
		case cfg.KeyingThinking == 1:
			out.Missing["efficiency_pct"] = "12.86 NOPM per warehouse is the ceiling of the spec profile's mix, not of " + string(cfg.Profile) + "'s"
		}
	}
	lats := summarise(out, recs, len(users), win, cfg)
	tg.clientFigures(out.Instances, recs, win)
	rec := col.record()
	wl := hist.NewLog(t0, WindowLogComment)
	for i, h := range lats {
		_ = wl.Add(h, t0, t1, TxType(i).String())
	}
	rec.Window = wl.Bytes()
	if completed := out.TPMClient * win.Minutes(); completed > 0 {
		cpu := (cpu1 - cpu0).Seconds()
		out.Driver = &results.DriverCPU{Model: model, Threads: threads, CPUS: round(cpu, 3), CPUUsPerTxn: round(cpu/completed*1e6, 1),
			MachineSharePct: round(100*cpu/(win.Seconds()*float64(runtime.NumCPU())), 2),
			MemPerUserKB:    round((float64(heap1.HeapAlloc)-float64(heap0.HeapAlloc))/float64(len(users))/1024, 1)}
	}
	return out, rec, firstErr(userErr, ctx.Err())
}

// startUsers starts the users under wg, failing the run through fail:
// on the polling driver's threads, or a goroutine each. It returns the
// driver model and the polling threads.
func startUsers(ctx context.Context, users []*user, cfg RunConfig, ed *edges, wg *sync.WaitGroup, fail func(error)) (string, int) {
	rs := rawSessions(users, cfg)
	if rs == nil {
		for _, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fail(u.run(ctx))
			}()
		}
		return DriverGoroutines, 0
	}
	shards := shardUsers(len(users), driverThreads(cfg.DriverThreads, len(users)))
	// A polling thread keeps its P while it waits in the kernel, so the
	// runtime gets one more P for each: the collector, the edges and the
	// garbage collector keep the cores calibra had.
	addProcs(len(shards))
	var polls sync.WaitGroup
	for _, sh := range shards {
		polls.Add(1)
		go func() {
			defer polls.Done()
			fail(poll(ctx, users[sh.lo:sh.hi], rs[sh.lo:sh.hi], ed))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		polls.Wait()
		addProcs(-len(shards))
	}()
	return DriverPolling, len(shards)
}

// procsMu makes addProcs's changes add up when runs share the process.
var procsMu sync.Mutex

// addProcs adds n to GOMAXPROCS (n < 0 takes away).
func addProcs(n int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + n)
}

// noteAutovacuum records autovacuum's work in the window where the server
// counts its transactions with calibra's, and says what it does to tpm_db.
func noteAutovacuum(out *results.OLTP, c0, c1 Counters) {
	if !c1.CountsAutovacuum {
		return
	}
	av := autovacuumIn(c0, c1)
	out.AutovacuumInWindow = &av
	if av > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("autovacuum worked in the benchmark database during the window (%d tables vacuumed or analysed, or workers busy at an edge): "+
			"the server counts its transactions with calibra's, so tpm_db may read a few dozen above tpm_client", av))
	}
}

// noteCheckpoints records the window's checkpoints and warns when there
// were none: the storage then never absorbed the checkpoint's writes, which
// a steady state includes.
func noteCheckpoints(out *results.OLTP, n int64) {
	out.CheckpointsInWindow = &n
	if n == 0 {
		out.Warnings = append(out.Warnings, "no checkpoint began in the timed window: the figures miss the checkpoint's writes a steady state includes (a longer --duration, 5 min or more, or a more frequent checkpoint setting of the engine)")
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// edge calls the observers' edge hook, if any.
func edge(f func() time.Time) *time.Time {
	if f == nil {
		return nil
	}
	t := f().UTC()
	return &t
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// CheckUsers refuses more terminals than the specification allows per
// warehouse when its keying and think times are on.
func CheckUsers(users, warehouses int, keying float64) error {
	if keying > 0 && warehouses > 0 && users > MaxUsersPerWarehouse*warehouses {
		return fault.Input(fmt.Sprintf("use at most %d users, more warehouses, or --keying-thinking off", MaxUsersPerWarehouse*warehouses),
			"with keying and thinking on, each of the %d users is a terminal and a warehouse has at most %d", users, MaxUsersPerWarehouse)
	}
	return nil
}

// newUsers connects the users, each to a connection of its own or, with
// fewer connections than users, to a pool they share as terminals; it
// binds each to its home warehouse (and district, as a spec terminal, when
// keying and thinking are on). It returns every session it opened and
// the recorders of the users' outcomes: one a user, or one a connection,
// with the pool they share (nil when each has its own).
func newUsers(ctx context.Context, tg *members, cfg RunConfig, driven []int, bi *BuildInfo, ed *edges) ([]*user, []Session, []*recorder, *connPool, error) {
	conns := cfg.Users
	var pool *connPool
	if cfg.pooled() {
		conns = cfg.Connections
	}
	sessions, err := openSessions(ctx, tg.ds, cfg.Mode, conns)
	if err != nil {
		return nil, sessions, nil, nil, fmt.Errorf("connect the users: %w", err)
	}
	recs := make([]*recorder, len(sessions))
	for i := range recs {
		recs[i] = newRecorder(cfg.pooled())
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
		if cfg.RatePerUser > 0 {
			// Users start spread over one interval, not in lockstep.
			u.interval = time.Duration(float64(time.Second) / cfg.RatePerUser)
			u.next = time.Now().Add(time.Duration(unitFloat(rng) * float64(u.interval)))
		}
		users[i] = u
	}
	return users, sessions, recs, pool, nil
}

// waitStart holds the connected users until at; an open loop's schedules
// move with the wait, so they do not start with a burst of late
// transactions.
func waitStart(ctx context.Context, at time.Time, users []*user, prog *progress.Printer) error {
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
		if u.interval > 0 {
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

// summarise merges the window records of the users' recorders into the
// step's metrics, and returns each type's histogram of the window.
func summarise(out *results.OLTP, recs []*recorder, users int, win time.Duration, cfg RunConfig) [numTxTypes]*hist.Histogram {
	var types [numTxTypes]typeStats
	var inputs inputCounts
	var lats [numTxTypes]*hist.Histogram
	for i := range lats {
		lats[i] = hist.New()
	}
	all := hist.New()
	for _, r := range recs {
		inputs.add(r.win.inputs)
		for class, n := range r.win.errClasses {
			if out.ErrorClasses == nil {
				out.ErrorClasses = map[string]int64{}
			}
			out.ErrorClasses[class] += n
		}
		for class, n := range r.win.retries {
			out.Retries = addCount(out.Retries, class, n)
		}
		for i := range types {
			types[i].add(r.win.types[i])
			lats[i].Merge(r.win.lat[i])
			all.Merge(r.win.lat[i])
		}
	}
	out.Transactions = map[string]results.TxStats{}
	out.MixPct = map[string]float64{}
	mix := mixPct(types)
	var completed int64
	for i, s := range types {
		ts := results.TxStats{Count: s.count, Rollbacks: s.rollbacks, Errors: s.errors}
		if s.count > 0 {
			ts.LatMs = lats[i].Summary(float64(s.sumNs) / float64(s.count) / 1e6)
		}
		out.Transactions[TxType(i).String()] = ts
		out.MixPct[TxType(i).String()] = round(mix[i], 2)
		completed += s.count
	}
	out.NewOrderCommits = types[NewOrder].count - types[NewOrder].rollbacks
	out.Checks, out.InvalidReasons = check(types, inputs, cfg.Profile, users, cfg.Warehouses)
	if out.Checks != nil {
		valid := len(out.InvalidReasons) == 0
		out.Valid = &valid
	} else {
		out.Missing["valid"] = "no transaction completed in the timed window"
	}
	var warn string
	if out.Delivery, warn = deliverySkips(types[Delivery].count, inputs.skippedDistricts); warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	out.TPMClient = perMinute(float64(completed), win)
	if cfg.pooled() && completed > 0 {
		queue, waitNs := hist.New(), int64(0)
		for _, r := range recs {
			queue.Merge(r.win.queue)
			waitNs += r.win.waitNs
		}
		q := queue.Summary(float64(waitNs) / float64(completed) / 1e6)
		out.QueueMs = &q
	}
	if a := art(types); !math.IsNaN(a) {
		out.ARTMs = round(a, 3)
		l := all.Summary(a)
		out.LatMs = &l
	} else {
		out.Missing["art_ms"] = "no transaction completed in the timed window"
	}
	return lats
}

// collector gathers the users' ticks every second for the timeline and the
// live status line.
type collector struct {
	recs  []*recorder
	users int
	began time.Time
	prog  *progress.Printer
	out   *results.OLTP
	tick  tickStats
	ticks []Tick
	log   *hist.Log
	last  time.Time
	spare *hist.Histogram // an empty tick histogram to swap into a recorder
}

func (c *collector) record() *Record { return &Record{Ticks: c.ticks, Histograms: c.log.Bytes()} }

func (c *collector) collect(now time.Time, phase string) {
	c.tick = tickStats{lat: c.tick.lat}
	c.tick.lat.Reset()
	if c.spare == nil {
		c.spare = hist.New()
	}
	for _, r := range c.recs {
		c.spare = r.takeTick(&c.tick, c.spare)
	}
	prev := c.last
	if prev.IsZero() {
		prev = c.began
	}
	c.last = now
	span := now.Sub(prev)
	var n, errs int64
	for _, s := range c.tick.types {
		n += s.count
		errs += s.errors
	}
	tk := Tick{At: now, ElapsedS: now.Sub(c.began).Seconds(), Phase: phase, Errors: errs, Users: c.users,
		TPM: perMinute(float64(n), span), NOPMClient: perMinute(float64(c.tick.types[NewOrder].count-c.tick.types[NewOrder].rollbacks), span)}
	if n > 0 {
		tk.ARTMs = art(c.tick.types)
		tk.P90Ms = c.tick.lat.QuantileMs(90)
	}
	c.ticks = append(c.ticks, tk)
	_ = c.log.Add(c.tick.lat, prev, now, phase)
	c.prog.Status(fmt.Sprintf("oltp %-7s %5.0fs  tpm %8.0f  nopm %8.0f  art %7.2f ms  p90 %7.2f ms  errors %d",
		phase, tk.ElapsedS, tk.TPM, tk.NOPMClient, tk.ARTMs, tk.P90Ms, errs))
}

// TickColumns are the run's per-second figures as columns of the
// observers' timeseries, each row taking the tick nearest its time (within
// half a second).
type TickColumns []Tick

// Header names the columns.
func (tc TickColumns) Header() []string {
	return []string{"oltp_phase", "oltp_tpm_client", "oltp_nopm_client", "oltp_art_ms", "oltp_p90_ms", "oltp_errors", "oltp_users"}
}

// Row gives the tick nearest at, or empty cells.
func (tc TickColumns) Row(at time.Time) []string {
	i := sort.Search(len(tc), func(i int) bool { return !tc[i].At.Before(at) })
	best := -1
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(tc) && (best < 0 || absDur(tc[j].At.Sub(at)) < absDur(tc[best].At.Sub(at))) {
			best = j
		}
	}
	if best < 0 || absDur(tc[best].At.Sub(at)) > 500*time.Millisecond {
		return make([]string, len(tc.Header()))
	}
	return tc[best].cells()
}

func (t Tick) cells() []string {
	return []string{t.Phase, fmt.Sprintf("%.1f", t.TPM), fmt.Sprintf("%.1f", t.NOPMClient),
		fmt.Sprintf("%.3f", t.ARTMs), fmt.Sprintf("%.3f", t.P90Ms), fmt.Sprintf("%d", t.Errors), fmt.Sprintf("%d", t.Users)}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// WriteTimeseries writes the ticks as CSV, one row a second, with the
// columns they have in the observers' timeseries (used without observers).
func WriteTimeseries(w io.Writer, ticks []Tick) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(results.CSVRecord(append([]string{"time"}, TickColumns(nil).Header()...))); err != nil {
		return err
	}
	for _, t := range ticks {
		if err := cw.Write(results.CSVRecord(append([]string{t.At.UTC().Format(time.RFC3339Nano)}, t.cells()...))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
