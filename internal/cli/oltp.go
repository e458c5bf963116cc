package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
)

func (a *app) oltpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "oltp",
		Short: "Layer 4: TPC-C-like transactions (build, run, check)",
		Long: `The TPC-C-derived OLTP layer, as HammerDB runs it in the storage studies: build
the nine tables once, then run timed windows of the five transactions and
read NOPM, TPM and response times. TPC-C-derived: not comparable with
published TPC-C results.`,
	}
	cmd.AddCommand(a.command(a.oltpBuildLayer), a.command(a.oltpRunLayer), a.command(a.oltpRampLayer), a.command(a.oltpCheckLayer))
	return cmd
}

// bytesPerWarehouse is a generous estimate of one warehouse on disk, with
// its template copy, for the free-space check.
const bytesPerWarehouse = 2 * 160 << 20

// minFree is what the managed instance needs beyond its data: the cluster
// itself and WAL.
const minFree = 1 << 30

type buildFlags struct {
	warehouses, workers int
	rebuild             bool
	implicit            bool // a run's build of a missing schema (oltp.BuildConfig.Implicit)
}

func (b *buildFlags) register(cmd *cobra.Command, forRun bool) {
	if forRun {
		cmd.Flags().IntVar(&b.warehouses, "warehouses", 0, "warehouses of the built schema (default: as built, or 1 when run has to build first)")
	} else {
		cmd.Flags().IntVar(&b.warehouses, "warehouses", 1, "warehouses to build (about 110 MB each)")
		cmd.Flags().BoolVar(&b.rebuild, "rebuild", false, "replace an existing build")
	}
	cmd.Flags().IntVar(&b.workers, "load-workers", runtime.NumCPU(), "parallel loader connections")
}

func (a *app) oltpBuildLayer(c *common) layer {
	var b buildFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Create and load the TPC-C-like schema",
		Long: `Create the nine TPC-C tables and load them with data generated as the
specification says (NURand, last-name syllables, 10% ORIGINAL...), in parallel
with COPY; then add keys and indexes, vacuum and analyze, and check the
consistency conditions 3.3.2.1 to 3.3.2.4. On the managed instance the loaded
database is kept as a template so later runs can start from a clean copy.`,
		Example: `  calibra oltp build --warehouses 10 --path /mnt/array
  calibra oltp build --warehouses 4 --dsn postgres://bench@db1/bench --rebuild`,
	}
	b.register(cmd, false)
	return layer{kind: results.KindOLTPBuild, cmd: cmd, plan: func(context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		if b.warehouses <= 0 {
			p.add("give a whole number of 1 or more", "--warehouses %d is not positive", b.warehouses)
		}
		if b.workers <= 0 {
			p.add("give a whole number of 1 or more", "--load-workers %d is not positive", b.workers)
		}
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		need, err := spaceFor("--warehouses", float64(b.warehouses), bytesPerWarehouse)
		if err != nil {
			return sessionNeeds{}, nil, err
		}
		return sessionNeeds{database: true, maxConns: b.workers + 10, bytes: need}, func(ctx context.Context, s *session) ([]results.Step, error) {
			st, err := buildStep(ctx, s, b, c.seed)
			return []results.Step{st}, err
		}, nil
	}}
}

func buildStep(ctx context.Context, s *session, b buildFlags, seed uint64) (results.Step, error) {
	started := time.Now()
	out, err := oltp.Build(ctx, s.target, oltp.BuildConfig{Warehouses: b.warehouses, Seed: seed, Workers: b.workers, Rebuild: b.rebuild, Implicit: b.implicit}, s.prog)
	if out == nil {
		out = &results.OLTPBuild{Workload: oltp.Workload, Warehouses: b.warehouses, Seed: seed, Workers: b.workers}
	}
	step := newStep(results.KindOLTPBuild, "oltp build", started, out)
	if err == nil {
		s.prog.Phase("oltp build: %d warehouses, %.0f MB in %.1f s (%.1f MB/s): load %.1f s, indexes %.1f s, vacuum %.1f s",
			b.warehouses, float64(out.DBBytes)/1e6, out.TotalS, out.MBPerS, out.LoadS, out.IndexS, out.VacuumS)
	}
	return step, err
}

// parseKeying reads --keying-thinking: off, on (the specification's times)
// or a positive scale of them.
func parseKeying(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "off", "false", "0":
		return 0, nil
	case "on", "true", "spec":
		return 1, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fault.Input("use off, on, or a positive scale such as 0.1", "--keying-thinking %q is not off, on or a scale", s)
	}
	return v, nil
}

// loadFlags are what a timed run and a ramp share: the schema, the mode,
// the pacing and the timing of each window.
type loadFlags struct {
	build            buildFlags
	mode, keying     string
	profile          string
	ratePerUser      float64
	rampup, duration time.Duration
	reset            bool
}

func (l *loadFlags) register(cmd *cobra.Command, rampup, duration time.Duration, per string) {
	l.build.register(cmd, true)
	f := cmd.Flags()
	f.StringVar(&l.mode, "mode", string(oltp.ModeProcedures), "procedures (PL/pgSQL functions, as HammerDB) or client (prepared statements from calibra)")
	f.StringVar(&l.profile, "profile", string(oltp.ProfileSpec), "spec (mix 45/43/4/4/4, NURand items and customers) or hammerdb (its driver's 10/10/1/1/1 of 23, uniform items and customers): their numbers differ")
	f.StringVar(&l.keying, "keying-thinking", "off", "closed loop with the specification's keying and think times: off, on, or a scale such as 0.1")
	f.Float64Var(&l.ratePerUser, "rate-per-user", 0, "open loop: each user starts this many transactions a second on a fixed schedule (0: closed loop)")
	f.DurationVar(&l.rampup, "rampup", rampup, "warm-up before "+per+" timed window (not measured)")
	f.DurationVar(&l.duration, "duration", duration, "length of "+per+" timed window")
	f.BoolVar(&l.reset, "reset", false, "recreate the database from its loaded template first (managed instance)")
}

// check validates the flags for at most maxUsers users and returns the run
// they describe (Users left to the caller).
func (l *loadFlags) check(cmd *cobra.Command, c *common, maxUsers int, p *problems) oltp.RunConfig {
	scale, err := parseKeying(l.keying)
	if err != nil {
		*p = append(*p, err)
	}
	warehouses := 0
	if cmd.Flags().Changed("warehouses") {
		warehouses = l.build.warehouses
		if warehouses <= 0 {
			p.add("give a whole number of 1 or more", "--warehouses %d is not positive", warehouses)
		} else if err := oltp.CheckUsers(maxUsers, warehouses, scale); err != nil {
			*p = append(*p, err)
		}
	}
	if l.mode != string(oltp.ModeProcedures) && l.mode != string(oltp.ModeClient) {
		p.add("use procedures or client", "--mode %q is not a transaction mode", l.mode)
	}
	if !slices.Contains(oltp.Profiles, oltp.Profile(l.profile)) {
		p.add("use spec or hammerdb", "--profile %q is not a workload profile", l.profile)
	}
	if l.ratePerUser < 0 {
		p.add("give a rate such as 10, or 0 for a closed loop", "--rate-per-user %g is negative", l.ratePerUser)
	}
	if l.ratePerUser > 0 && scale > 0 {
		p.add("choose one: an open loop (--rate-per-user) or keying and thinking", "--rate-per-user and --keying-thinking both pace the users")
	}
	if l.rampup < 0 {
		p.add("give a duration such as 30s or 2m", "--rampup %s is negative", l.rampup)
	}
	if l.duration <= 0 {
		p.add("give a duration such as 30s or 5m", "--duration %s is not positive", l.duration)
	}
	if l.build.workers <= 0 {
		p.add("give a whole number of 1 or more", "--load-workers %d is not positive", l.build.workers)
	}
	if l.reset && c.dsn != "" {
		p.add("drop --reset, or use the managed instance", "--reset needs the managed instance's template and cannot be used with --dsn")
	}
	return oltp.RunConfig{Warehouses: warehouses, Mode: oltp.Mode(l.mode), KeyingThinking: scale, RatePerUser: l.ratePerUser,
		Rampup: l.rampup, Duration: l.duration, Seed: c.seed, Profile: oltp.Profile(l.profile)}
}

// needs is what a load of at most users users needs from the session.
func (l *loadFlags) needs(users int) sessionNeeds {
	return sessionNeeds{database: true, maxConns: users + l.build.workers + 10, bytes: minFree}
}

func (a *app) oltpRunLayer(c *common) layer {
	var l loadFlags
	var users int
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a timed TPC-C-like window and measure NOPM, TPM and response times",
		Long: `Start every virtual user (one goroutine and one connection each), run the
ramp-up, then measure the timed window only:

  NOPM        committed New-Orders per minute: the growth of sum(d_next_o_id)
              over the window, read at its two edges
  tpm_db      the database's commits + rollbacks per minute (pg_stat_database),
              database-specific
  tpm_client  transactions completed per minute, counted by calibra
  ART         mean response time of every transaction of the window
  latency     per transaction type, p50/p90/p95/p99/max from HDR histograms
  valid       the measured mix against clause 5.2.3's minimums and the inputs
              against clause 9.2.2.5's bands (remote lines and payments,
              by-name selections, rollbacks); false with invalid_reasons
  checkpoints_in_window  the server's checkpoints in the window: a warning
              when none, since a steady state includes them

The defaults (2 min ramp-up, 5 min window, as HammerDB's) aim at a steady
state; shorter windows are a first look. --profile hammerdb deals HammerDB's
mix (10/10/1/1/1 of 23: 43.48% New-Order) and draws items and customers
uniformly, as its PostgreSQL driver does, to reproduce a HammerDB figure; its
NOPM reads about 3.5% lower than the spec profile's at equal throughput.

With --keying-thinking off (the default, as HammerDB) users run back to back
(a closed loop) and latency is service time. With on or a scale, each user
is a terminal bound to a home warehouse and district with the
specification's keying and think times, and latency runs from the intended
start (response time). With --rate-per-user R (an open loop) each user starts
a transaction every 1/R s on a fixed schedule whatever the last one took, and
latency runs from the scheduled start, so a slow system's queueing is
counted (coordinated omission corrected).

On the managed instance with no schema, run builds one first and says so.`,
		Example: `  calibra oltp run --warehouses 2 --users 4 --rampup 5s --duration 30s --path /mnt/array
  calibra oltp run --users 8 --mode client --duration 5m
  calibra oltp run --warehouses 10 --users 100 --keying-thinking 0.1 --reset
  calibra oltp run --users 16 --rate-per-user 50 --duration 2m`,
	}
	// HammerDB's defaults: a steady state includes checkpoints, which a
	// minute after a fresh start rarely does.
	l.register(cmd, 2*time.Minute, 5*time.Minute, "the")
	cmd.Flags().IntVar(&users, "users", 4, "virtual users, each with its own connection")
	return layer{kind: results.KindOLTP, cmd: cmd, plan: func(context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		if users <= 0 {
			p.add("give a whole number of 1 or more", "--users %d is not positive", users)
		}
		cfg := l.check(cmd, c, users, &p)
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		cfg.Users = users
		return l.needs(users), func(ctx context.Context, s *session) ([]results.Step, error) {
			return runSteps(ctx, s, cfg, l, c.seed)
		}, nil
	}}
}

// prepareLoad resets the database if asked, and builds the schema first
// when the managed instance has none.
func prepareLoad(ctx context.Context, s *session, cfg oltp.RunConfig, l loadFlags, seed uint64) ([]results.Step, error) {
	if l.reset {
		s.prog.Phase("oltp: recreating the database from its loaded template")
		if err := s.target.RestoreTemplate(ctx); err != nil {
			return nil, err
		}
	}
	bi, err := oltp.Built(ctx, s.target)
	if err != nil || bi != nil {
		return nil, err
	}
	if s.target.Managed == nil {
		return nil, fault.Input("build it first with 'calibra oltp build --dsn ...'", "the database of --dsn holds no TPC-C-like schema")
	}
	b := l.build
	b.warehouses, b.implicit = max(cfg.Warehouses, 1), true
	s.prog.Phase("oltp: no schema on the managed instance; building %d warehouses first (an implicit build never replaces a larger loaded template)", b.warehouses)
	st, err := buildStep(ctx, s, b, seed)
	return []results.Step{st}, err
}

// runSteps prepares the schema, then runs the timed window and checks the
// database's consistency after it.
func runSteps(ctx context.Context, s *session, cfg oltp.RunConfig, l loadFlags, seed uint64) ([]results.Step, error) {
	steps, err := prepareLoad(ctx, s, cfg, l, seed)
	if err != nil {
		return steps, err
	}
	cfg.Edge = s.edge()
	started := time.Now()
	out, rec, err := oltp.Run(ctx, s.target, cfg, s.prog)
	if out == nil {
		return steps, err
	}
	if werr := writeRecord(s, rec, "oltp"); werr != nil && err == nil {
		err = werr
	}
	if err == nil && out.Missing["nopm"] == "" {
		s.prog.Phase("oltp run: checking consistency")
		if out.Consistency, err = oltp.Check(ctx, s.target); err == nil && !out.Consistency.OK {
			err = errors.New("the database fails the consistency conditions after the run")
		}
	}
	name := fmt.Sprintf("oltp %d warehouses %d users %s", out.Warehouses, out.Users, out.Mode)
	steps = append(steps, newStep(results.KindOLTP, name, started, out))
	return steps, err
}

func (a *app) oltpCheckLayer(c *common) layer {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the TPC-C consistency conditions 3.3.2.1 to 3.3.2.4",
	}
	return layer{kind: results.KindOLTPCheck, cmd: cmd, plan: func(context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		return sessionNeeds{database: true, maxConns: 10, bytes: minFree}, func(ctx context.Context, s *session) ([]results.Step, error) {
			started := time.Now()
			cons, w, err := oltp.CheckBuilt(ctx, s.target)
			if err != nil {
				return nil, err
			}
			step := newStep(results.KindOLTPCheck, "oltp check", started, &results.OLTPCheck{Warehouses: w, Consistency: cons})
			if !cons.OK {
				return []results.Step{step}, errors.New("the database fails the consistency conditions")
			}
			return []results.Step{step}, nil
		}, nil
	}}
}

// writeRecord keeps a load's timeline: its seconds join timeseries.csv,
// and its per-tick latency histograms go under raw/ as name-latency.hlog.
func writeRecord(s *session, rec *oltp.Record, name string) error {
	if rec == nil || len(rec.Ticks) == 0 {
		return nil
	}
	s.ticks = append(s.ticks, rec.Ticks...)
	return writeFile(s.dir, rec.Histograms, "raw", s.rawPrefix+name+"-latency.hlog")
}
