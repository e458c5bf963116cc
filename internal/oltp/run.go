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
	// the server's counters hold exactly that edge's transactions and
	// while no user runs; it returns the time of the observers' reading.
	Edge func() time.Time
	// Partition is this process's share of a run split over several
	// (Users is then the whole run's); the zero value is the whole run.
	Partition Partition
	// StartAt, when set, is the instant the users start, after connecting:
	// processes sharing it run their ramp-up and window at the same times.
	StartAt time.Time
	// DriverThreads is the polling driver's threads, each polling its
	// share of the connections and users; 0 is one for every 64
	// connections, at most one for each core calibra may use (GOMAXPROCS).
	DriverThreads int
	// Driver, when DriverGoroutines, runs a goroutine a user even where
	// the dialect polls (to compare the two); "" polls where it can.
	Driver string
	// Watch, when set, follows the run second by second (--metrics-listen).
	Watch Watcher
	// OnTick, when set, is handed each second's tick as the timeline keeps
	// it (the run's live record in the results store).
	OnTick func(Tick)
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
	cfg, driven, err := checkRun(cfg, bi, len(tg.ds))
	if err != nil {
		return nil, nil, err
	}
	flushStats, statsNote, err := tg.ctls[0].StatsFlush(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := newOutput(cfg, statsNote)
	// From here on Users is this process's share.
	cfg.Users = len(driven)
	out.Users = cfg.Users
	ed := newEdges(flushStats)

	prog.Phase("oltp run: connecting %d users", cfg.Users)
	cr, err := connect(ctx, tg, cfg, driven, bi, ed)
	defer cr.close()
	if err != nil {
		return nil, nil, err
	}
	if cfg.pooled() {
		out.Connections = cfg.Connections
	}
	gs, why := newGates(tg.ctls[0], cfg)
	if why != "" {
		out.Warnings = append(out.Warnings, why)
	}
	if !cfg.StartAt.IsZero() {
		if err := waitStart(ctx, cfg.StartAt, cr.users, gs, prog); err != nil {
			return nil, nil, err
		}
	}
	tw, err := drive(ctx, tg, cfg, cr, ed, gs, out, prog)
	if err != nil {
		return nil, nil, err
	}
	userErr := tw.userErr
	gs.record(out, tw.measured && ctx.Err() == nil && userErr == nil, ed.stopFlushes.Load())
	if !tw.measured {
		for _, k := range []string{"nopm", "tpm_db", "tpm_client", "art_ms"} {
			out.Missing[k] = "the run stopped before the timed window began"
		}
		out.Transactions = map[string]results.TxStats{}
		out.MixPct = map[string]float64{}
		return out, tw.col.record(), firstErr(userErr, ctx.Err())
	}
	win := tw.t1.Sub(tw.t0)
	out.DurationS = win.Seconds()
	if err := serverFigures(ctx, tg, cfg, ed, out, tw, len(cr.users), ctx.Err() != nil || userErr != nil, userErr != nil); err != nil {
		return nil, nil, err
	}
	lats := summarise(out, cr.recs, len(cr.users), win, cfg)
	tg.clientFigures(out.Instances, cr.recs, win)
	rec := tw.col.record()
	wl := hist.NewLog(tw.t0, WindowLogComment)
	for i, h := range lats {
		_ = wl.Add(h, tw.t0, tw.t1, TxType(i).String())
	}
	rec.Window = wl.Bytes()
	out.Driver = driverFigures(out, cr, tw, cfg)
	return out, rec, firstErr(userErr, ctx.Err())
}

// checkRun refuses a run the build or the target cannot serve, and
// returns cfg completed (warehouses as built, the spec's profile by
// default) with the users this process drives.
func checkRun(cfg RunConfig, bi *BuildInfo, servers int) (RunConfig, []int, error) {
	if servers > 1 {
		switch {
		case !cfg.Partition.Whole():
			return cfg, nil, fault.Input("drop --partition, or run each server apart", "--partition splits the load over processes, and this target has %d servers", servers)
		case cfg.pooled():
			return cfg, nil, fault.Input("drop --connections", "--connections pools one server's connections, and this target has %d servers", servers)
		case cfg.Users < servers:
			return cfg, nil, fault.Input(fmt.Sprintf("give --users %d or more", servers), "%d users leave some of the %d servers without load", cfg.Users, servers)
		}
	}
	if cfg.Warehouses == 0 {
		cfg.Warehouses = bi.Warehouses
	}
	if cfg.Warehouses != bi.Warehouses {
		return cfg, nil, fault.Input(fmt.Sprintf("pass --warehouses %d, or rebuild with 'calibra oltp build --rebuild --warehouses %d'", bi.Warehouses, cfg.Warehouses),
			"the schema holds %d warehouses but the run asks for %d", bi.Warehouses, cfg.Warehouses)
	}
	if err := CheckUsers(cfg.Users, cfg.Warehouses, cfg.KeyingThinking); err != nil {
		return cfg, nil, err
	}
	if err := CheckPartition(cfg.Partition, cfg.Users, cfg.Warehouses); err != nil {
		return cfg, nil, err
	}
	if cfg.Profile == "" {
		cfg.Profile = ProfileSpec
	}
	return cfg, cfg.Partition.Users(cfg.Users, cfg.Warehouses), nil
}

// newOutput is the results of a run as configured, before it runs; cfg's
// Users is still the whole run's.
func newOutput(cfg RunConfig, statsNote string) *results.OLTP {
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
	if statsNote != "" {
		out.Notes = append(out.Notes, statsNote)
	}
	if !cfg.Partition.Whole() {
		out.Partition = &results.Partition{Index: cfg.Partition.Index, Of: cfg.Partition.Of, UsersTotal: cfg.Users,
			HomeWarehouses: cfg.Partition.Warehouses(cfg.Warehouses), Counters: cfg.Partition.Counters()}
		if !cfg.StartAt.IsZero() {
			at := cfg.StartAt.UTC()
			out.Partition.StartAt = &at
		}
	}
	return out
}

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
	kb := round(float64(heap1-heap0)/float64(users)/1024, 2)
	if kb <= 0 {
		return 0, fmt.Sprintf("the process's Go heap grew by %d bytes while %d users connected, under 0.01 KB a user: other work in the process freed about what they took", heap1-heap0, users)
	}
	return kb, ""
}

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

// serverFigures reads the servers' counters at the window's end and fills
// in what they give (NOPM, tpm_db, checkpoints), or says why they are
// missing: cut says the run was interrupted or failed.
func serverFigures(ctx context.Context, tg *members, cfg RunConfig, ed *edges, out *results.OLTP, tw *timed, users int, cut, failed bool) error {
	win := tw.t1.Sub(tw.t0)
	switch {
	case cut:
		reason := "the run was interrupted"
		if failed {
			reason = "the run failed"
		}
		out.Missing["nopm"] = reason + ": the server's counters at the cut are not exact"
		out.Missing["tpm_db"] = out.Missing["nopm"]
		out.Missing["checkpoints_in_window"] = reason + ": the server's counters were not read at the cut"
		return nil
	case !cfg.Partition.Counters():
		why := fmt.Sprintf("the database's counters are read by the counter partition, 1/%d; 'calibra merge' takes them from there", cfg.Partition.Of)
		for _, k := range []string{"nopm", "tpm_db", "checkpoints_in_window"} {
			out.Missing[k] = why
		}
		return nil
	}
	c1s := tw.c1s
	if c1s == nil {
		var err error
		if c1s, err = tg.counters(ctx, false); err != nil {
			return fmt.Errorf("read counters at the window end: %w", err)
		}
	}
	c0, c1 := tg.sum(tw.c0s), tg.sum(c1s)
	n := nopm(c0, c1, win)
	// calibra's own commits inside the window: each server's start read
	// (and its flush) and the flush calls at the end edge.
	perRead := int64(1)
	if ed.flushStats {
		perRead++
	}
	own := perRead*int64(len(tw.c0s)) + ed.stopFlushes.Load() + tw.gates.own()
	// and autovacuum's, each server's apart (a visit costs each its own).
	var av int64
	avKnown := true
	for k := range c1s {
		n, ok := AutovacuumXacts(tw.c0s[k], c1s[k])
		av, avKnown = av+n, avKnown && ok
	}
	tpm := tpmDB(c0, c1, own+av, win)
	out.Instances = tg.figures(tw.c0s, c1s, perRead, ed.flushStats, users, win)
	out.NOPM, out.TPMDB = &n, &tpm
	noteAutovacuum(out, c0, c1, av, avKnown)
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
	return nil
}

// driverFigures is the load generator's own cost over the window, with
// the lateness of paced starts; nil when no transaction completed.
func driverFigures(out *results.OLTP, cr *crew, tw *timed, cfg RunConfig) *results.DriverCPU {
	win := tw.t1.Sub(tw.t0)
	completed := out.TPMClient * win.Minutes()
	if completed <= 0 {
		return nil
	}
	cpu := (tw.cpu1 - tw.cpu0).Seconds()
	d := &results.DriverCPU{Model: tw.model, Threads: tw.threads, CPUS: round(cpu, 3), CPUUsPerTxn: round(cpu/completed*1e6, 1),
		MachineSharePct: round(100*cpu/(win.Seconds()*float64(runtime.NumCPU())), 2)}
	if kb, why := memPerUserKB(cr.heap0, cr.heap1, len(cr.users)); why != "" {
		out.Missing = results.SetMissing(out.Missing, "driver.mem_per_user_kb", why)
	} else {
		d.MemPerUserKB = kb
	}
	if cr.pollers == nil {
		d.Reason = unpolledReason(cr.sessions)
	}
	if cpu, wakes := pollingCPU(cr.pollers); cpu > 0 {
		d.PollingCPUUsPerTxn = round(cpu.Seconds()/completed*1e6, 1)
		if wakes > 0 {
			d.TxnPerWakeup = round(completed/float64(wakes), 2)
			d.PollingCPUUsPerWakeup = round(cpu.Seconds()/float64(wakes)*1e6, 1)
		}
	}
	if cfg.KeyingThinking > 0 || cfg.RatePerUser > 0 {
		lag, ns := hist.New(), int64(0)
		for _, r := range cr.recs {
			lag.Merge(r.win.lag)
			ns += r.win.lagNs
		}
		if n := lag.Count(); n > 0 {
			l := lag.Summary(float64(ns) / float64(n) / 1e6)
			d.StartLagMs = &l
		}
	}
	return d
}

// unpolledReason is a session's reason for running a goroutine a user
// where its mode polls elsewhere; "" when none gives one.
func unpolledReason(sessions []Session) string {
	for _, s := range sessions {
		if u, ok := s.(Unpolled); ok && u.Unpolled() != "" {
			return u.Unpolled()
		}
	}
	return ""
}

// pollingCPU is the polling threads' own CPU, and their returns from
// epoll_wait, between their sight of the window's start and its end; 0
// with goroutines or when a thread saw neither.
func pollingCPU(pls []*poller) (time.Duration, uint64) {
	var cpu time.Duration
	var wakes uint64
	for _, pl := range pls {
		if pl.cpuBegun > 0 && pl.cpuStopped > pl.cpuBegun {
			cpu += pl.cpuStopped - pl.cpuBegun
			wakes += pl.wakesStopped - pl.wakesBegun
		}
	}
	return cpu, wakes
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

// noteAutovacuum records autovacuum's work in the window where the server
// counts its transactions with calibra's, the transactions tpm_db left out
// for it (xacts), and, when a worker was at work at an edge (!known), that
// tpm_db could not separate its transactions.
func noteAutovacuum(out *results.OLTP, c0, c1 Counters, xacts int64, known bool) {
	if !c1.CountsAutovacuum {
		return
	}
	av := autovacuumIn(c0, c1)
	out.AutovacuumInWindow = &av
	switch {
	case !known:
		out.Missing = results.SetMissing(out.Missing, "autovacuum_xacts", "an autovacuum worker was at work in the benchmark database at an edge of the window, and the server counts its transactions when it exits")
		out.Warnings = append(out.Warnings, fmt.Sprintf("autovacuum worked in the benchmark database across an edge of the window (%d vacuums or analyses finished in it, or workers busy at an edge): "+
			"the server counts its transactions with calibra's, and tpm_db could not take them out: it may read a few dozen above tpm_client", av))
	case xacts > 0:
		out.AutovacuumXacts = &xacts
		out.Notes = append(out.Notes, fmt.Sprintf("autovacuum worked in the benchmark database during the window (%d vacuums or analyses): "+
			"tpm_db leaves out the %d transactions the server counted for it with calibra's", av, xacts))
	default:
		out.AutovacuumXacts = &xacts
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
	watch Watcher
	sec   Second

	onTick func(Tick) // RunConfig.OnTick
}

func (c *collector) record() *Record { return &Record{Ticks: c.ticks, Histograms: c.log.Bytes()} }

func (c *collector) collect(now time.Time, phase string) {
	c.tick = tickStats{lat: c.tick.lat, txs: c.tick.txs[:0]}
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
	if c.watch != nil {
		c.tick.second(&c.sec, phase, c.users)
		c.watch.Second(&c.sec)
	}
	c.prog.Status(fmt.Sprintf("oltp %-7s %5.0fs  tpm %8.0f  nopm %8.0f  art %7.2f ms  p90 %7.2f ms  errors %d",
		phase, tk.ElapsedS, tk.TPM, tk.NOPMClient, tk.ARTMs, tk.P90Ms, errs))
	if c.onTick != nil {
		c.onTick(tk)
	}
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
