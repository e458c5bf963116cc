package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
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
	cmd.AddCommand(a.oltpBuildCommand(), a.oltpRunCommand(), a.oltpCheckCommand())
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

func (a *app) oltpBuildCommand() *cobra.Command {
	var c common
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var p problems
			c.validate(&p)
			if b.warehouses <= 0 {
				p.add("give a whole number of 1 or more", "--warehouses %d is not positive", b.warehouses)
			}
			if b.workers <= 0 {
				p.add("give a whole number of 1 or more", "--load-workers %d is not positive", b.workers)
			}
			if err := p.err(); err != nil {
				return err
			}
			need := uint64(minFree + b.warehouses*bytesPerWarehouse)
			return a.runSession(cmd, &c, sessionNeeds{database: true, maxConns: b.workers + 10, bytes: need}, func(ctx context.Context, s *session) ([]results.Step, error) {
				st, err := buildStep(ctx, s, b, c.seed)
				return []results.Step{st}, err
			})
		},
	}
	c.register(cmd)
	b.register(cmd, false)
	return cmd
}

func buildStep(ctx context.Context, s *session, b buildFlags, seed uint64) (results.Step, error) {
	started := time.Now()
	out, err := oltp.Build(ctx, s.target, oltp.BuildConfig{Warehouses: b.warehouses, Seed: seed, Workers: b.workers, Rebuild: b.rebuild}, s.prog)
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

func (a *app) oltpRunCommand() *cobra.Command {
	var c common
	var b buildFlags
	var users int
	var mode, keying string
	var rampup, duration time.Duration
	var reset bool
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

With --keying-thinking off (the default, as HammerDB) users run back to back
and latency is service time. With on or a scale, each user is a terminal
bound to a home warehouse and district with the specification's keying and
think times, and latency runs from the intended start (response time).

On the managed instance with no schema, run builds one first and says so.`,
		Example: `  calibra oltp run --warehouses 2 --users 4 --rampup 5s --duration 30s --path /mnt/array
  calibra oltp run --users 8 --mode client --duration 5m
  calibra oltp run --warehouses 10 --users 100 --keying-thinking 0.1 --reset`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var p problems
			c.validate(&p)
			scale, err := parseKeying(keying)
			if err != nil {
				p = append(p, err)
			}
			if cmd.Flags().Changed("warehouses") && b.warehouses <= 0 {
				p.add("give a whole number of 1 or more", "--warehouses %d is not positive", b.warehouses)
			}
			if users <= 0 {
				p.add("give a whole number of 1 or more", "--users %d is not positive", users)
			}
			if mode != string(oltp.ModeProcedures) && mode != string(oltp.ModeClient) {
				p.add("use procedures or client", "--mode %q is not a transaction mode", mode)
			}
			if rampup < 0 {
				p.add("give a duration such as 30s or 2m", "--rampup %s is negative", rampup)
			}
			if duration <= 0 {
				p.add("give a duration such as 30s or 5m", "--duration %s is not positive", duration)
			}
			if b.workers <= 0 {
				p.add("give a whole number of 1 or more", "--load-workers %d is not positive", b.workers)
			}
			if cmd.Flags().Changed("warehouses") && b.warehouses > 0 {
				if err := oltp.CheckUsers(users, b.warehouses, scale); err != nil {
					p = append(p, err)
				}
			}
			if reset && c.dsn != "" {
				p.add("drop --reset, or use the managed instance", "--reset needs the managed instance's template and cannot be used with --dsn")
			}
			if err := p.err(); err != nil {
				return err
			}
			warehouses := 0
			if cmd.Flags().Changed("warehouses") {
				warehouses = b.warehouses
			}
			cfg := oltp.RunConfig{Warehouses: warehouses, Users: users, Mode: oltp.Mode(mode), KeyingThinking: scale,
				Rampup: rampup, Duration: duration, Seed: c.seed}
			need := uint64(minFree)
			return a.runSession(cmd, &c, sessionNeeds{database: true, maxConns: users + b.workers + 10, bytes: need}, func(ctx context.Context, s *session) ([]results.Step, error) {
				return runSteps(ctx, s, cfg, b, reset, c.seed)
			})
		},
	}
	c.register(cmd)
	b.register(cmd, true)
	f := cmd.Flags()
	f.IntVar(&users, "users", 4, "virtual users, each with its own connection")
	f.StringVar(&mode, "mode", string(oltp.ModeProcedures), "procedures (PL/pgSQL functions, as HammerDB) or client (prepared statements from calibra)")
	f.StringVar(&keying, "keying-thinking", "off", "the specification's keying and think times: off, on, or a scale such as 0.1")
	f.DurationVar(&rampup, "rampup", 10*time.Second, "warm-up before the timed window (not measured)")
	f.DurationVar(&duration, "duration", time.Minute, "length of the timed window")
	f.BoolVar(&reset, "reset", false, "recreate the database from its loaded template first (managed instance)")
	return cmd
}

// runSteps resets if asked, builds first when the managed instance has no
// schema, then runs the timed window.
func runSteps(ctx context.Context, s *session, cfg oltp.RunConfig, b buildFlags, reset bool, seed uint64) ([]results.Step, error) {
	var steps []results.Step
	cfg.Edge = s.edge()
	if reset {
		s.prog.Phase("oltp run: recreating the database from its loaded template")
		if err := s.target.RestoreTemplate(ctx); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	out, rec, err := oltp.Run(ctx, s.target, cfg, s.prog)
	if errors.Is(err, oltp.ErrNotBuilt) {
		if s.target.Managed == nil {
			return nil, fault.Input("build it first with 'calibra oltp build --dsn ...'", "the database of --dsn holds no TPC-C-like schema")
		}
		b.warehouses = max(cfg.Warehouses, 1)
		s.prog.Phase("oltp run: no schema on the managed instance; building %d warehouses first", b.warehouses)
		var st results.Step
		st, err = buildStep(ctx, s, b, seed)
		steps = append(steps, st)
		if err != nil {
			return steps, err
		}
		started = time.Now()
		out, rec, err = oltp.Run(ctx, s.target, cfg, s.prog)
	}
	if out == nil {
		return steps, err
	}
	if werr := writeRecord(s, rec); werr != nil && err == nil {
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

func (a *app) oltpCheckCommand() *cobra.Command {
	var c common
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the TPC-C consistency conditions 3.3.2.1 to 3.3.2.4",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var p problems
			c.validate(&p)
			if err := p.err(); err != nil {
				return err
			}
			return a.runSession(cmd, &c, sessionNeeds{database: true, maxConns: 10, bytes: minFree}, func(ctx context.Context, s *session) ([]results.Step, error) {
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
			})
		},
	}
	c.register(cmd)
	return cmd
}

// writeRecord keeps the run's timeline: its per-second figures join the
// observers' timeseries.csv (or make it alone, without observers), and the
// per-tick latency histograms go under raw/.
func writeRecord(s *session, rec *oltp.Record) error {
	if rec == nil || len(rec.Ticks) == 0 {
		return nil
	}
	if s.obs != nil {
		s.extra = append(s.extra, oltp.TickColumns(rec.Ticks))
	} else {
		var buf bytes.Buffer
		if err := oltp.WriteTimeseries(&buf, rec.Ticks); err != nil {
			return err
		}
		if err := writeFile(s.dir, buf.Bytes(), "timeseries.csv"); err != nil {
			return err
		}
	}
	return writeFile(s.dir, rec.Histograms, "raw", "oltp-latency.hlog")
}
