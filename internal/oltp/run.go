package oltp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/hist"
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
