package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

func (a *app) dssCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dss",
		Short: "Layer 5: TPC-H-like decision support (build, power, throughput, run)",
		Long: `The TPC-H-derived decision-support layer, as the storage studies run it:
build the eight tables once at a scale factor, then run the power test (one
stream of the 22 queries between the two refresh functions) and the
throughput test (S concurrent streams and a refresh stream), and read the
query times and the storage bandwidth over each test.

TPC-H-derived, not comparable with published TPC-H results: the data is
dbgen's (tpchgen-cli), the queries and their parameters follow the
specification, but nothing here is audited.`,
	}
	cmd.AddCommand(a.command(a.dssBuildLayer), a.command(a.dssRunLayer("power")), a.command(a.dssRunLayer("throughput")),
		a.command(a.dssRunLayer("run")))
	return cmd
}

// bytesPerSF is a generous estimate of one scale factor on disk: about
// 1.4 GB of tables, 0.4 GB of indexes, and WAL.
const bytesPerSF = 3e9

type dssBuildFlags struct {
	sf      float64
	workers int
	rebuild bool
	tpchgen string
}

func (b *dssBuildFlags) register(cmd *cobra.Command, forRun bool) {
	f := cmd.Flags()
	if forRun {
		f.Float64Var(&b.sf, "sf", 0, "scale factor of the build (default: as built, or 1 when the managed instance has none and run builds first)")
	} else {
		f.Float64Var(&b.sf, "sf", 1, "scale factor: about 1 GB of data per unit; fractions such as 0.01 or 0.1 work")
		f.BoolVar(&b.rebuild, "rebuild", false, "replace an existing build")
	}
	f.IntVar(&b.workers, "load-workers", runtime.NumCPU(), "parallel generator + COPY pipelines")
	f.StringVar(&b.tpchgen, "tpchgen", "", "the tpchgen-cli program (default: tpchgen-cli on PATH)")
}

func (b *dssBuildFlags) validate(cmd *cobra.Command, p *problems) {
	if math.IsNaN(b.sf) || math.IsInf(b.sf, 0) {
		p.add("give a scale factor above 0, such as 0.1, 1 or 10", "--sf %g is not a number", b.sf)
	} else if b.sf <= 0 && (cmd.Flags().Changed("sf") || cmd.Flags().Lookup("rebuild") != nil) {
		p.add("give a scale factor above 0, such as 0.1, 1 or 10", "--sf %g is not positive", b.sf)
	}
	if b.workers <= 0 {
		p.add("give a whole number of 1 or more", "--load-workers %d is not positive", b.workers)
	}
}

func (b *dssBuildFlags) config(a *app) dss.BuildConfig {
	return dss.BuildConfig{ScaleFactor: b.sf, Workers: b.workers, Rebuild: b.rebuild, Tpchgen: b.tpchgen, Group: a.group}
}

func (a *app) dssBuildLayer(c *common) layer {
	var b dssBuildFlags
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Generate and load the TPC-H-like tables at a scale factor",
		Long: `Create the eight TPC-H tables in the schema ` + dss.Schema + ` and load them with
dbgen's data from tpchgen-cli (pip install tpchgen-cli), streamed in parallel
parts straight into COPY: nothing is written to disk but the database. Then
add the keys and indexes, vacuum and analyze, and check every table's row
count against the specification's for the scale factor (lineitem has
6,001,215 rows at SF 1, 600,572 at SF 0.1).

Recorded: the generator's version, rows per table, load, index and analyze
seconds, the database size and MB/s over the whole build.`,
		Example: `  calibra dss build --sf 1 --path /mnt/array
  calibra dss build --sf 0.1 --tpchgen ~/.cargo/bin/tpchgen-cli --rebuild`,
	}
	b.register(cmd, false)
	return layer{kind: results.KindDSSBuild, cmd: cmd, plan: func(ctx context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		b.validate(cmd, &p)
		if _, err := dss.FindGenerator(ctx, b.tpchgen); err != nil {
			p = append(p, err)
		}
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		need, err := spaceFor("--sf", b.sf, bytesPerSF)
		if err != nil {
			return sessionNeeds{}, nil, err
		}
		return sessionNeeds{database: true, maxConns: b.workers + 10, bytes: need}, dssBuildBody(b.config(a)), nil
	}}
}

// dssBuildBody builds the TPC-H-like schema as one step.
func dssBuildBody(cfg dss.BuildConfig) stepFunc {
	return func(ctx context.Context, s *session) ([]results.Step, error) {
		st, err := dssBuildStep(ctx, s, cfg)
		return []results.Step{st}, err
	}
}

func dssBuildStep(ctx context.Context, s *session, cfg dss.BuildConfig) (results.Step, error) {
	started := time.Now()
	out, err := dss.Build(ctx, s.target, cfg, s.prog)
	if out == nil {
		out = &results.DSSBuild{Workload: dss.Workload, ScaleFactor: cfg.ScaleFactor, Workers: cfg.Workers}
	}
	step := newStep(results.KindDSSBuild, fmt.Sprintf("dss build sf %g", cfg.ScaleFactor), started, out)
	if err == nil {
		s.prog.Phase("dss build: scale factor %g, %.0f MB in %.1f s (%.1f MB/s): load %.1f s, indexes %.1f s, analyze %.1f s",
			cfg.ScaleFactor, float64(out.DBBytes)/1e6, out.TotalS, out.MBPerS, out.LoadS, out.IndexS, out.AnalyzeS)
	}
	return step, err
}

const dssMetrics = `Metrics (TPC-H-derived, not comparable with published TPC-H results):
  seconds            each query's and refresh function's time, from sending it
                     to its last row; a query stopped by --query-timeout is
                     reported as timed out with no time
  geomean_s          geometric mean of the power test's 22 query seconds
  Power@Size         3600 x SF / geometric mean of the power test's 22 query
                     and 2 refresh seconds, each rounded to 0.1 s with less
                     than 0.05 s counted as 0.1 s (clause 5.3.7.5; queries
                     shorter than the longest / 1000 count as that), per hour
  Throughput@Size    S x 22 x 3600 / elapsed seconds of the throughput test
                     x SF: queries per hour, scaled
  QphH               sqrt(Power@Size x Throughput@Size), when one run has both;
                     "indicative" (valid: false, with invalid_reasons) below
                     SF 1 or with fewer streams than clause 5.3.4 requires
Storage MB/s, IOPS, CPU and waits over the step (the tests it ran) are in its
observe block, and second by second in timeseries.csv.

Queries: the specification's 22, in PostgreSQL's dialect (Q15's view is a
common table expression), parameters drawn by qgen's rules from --seed, each
query's recorded. Streams run the orders of the specification's Appendix A:
stream 0 in the power test, streams 1..S in the throughput test.
Refresh: RF1 inserts SF x 1500 orders with their lines, RF2 deletes as many:
the new orders are copies of the oldest under new keys and RF2 deletes the
oldest, so every run starts from the same volumes and the database stays
re-runnable.`

// dssRunLayer is the power test, the throughput test, or both ("run",
// the study's kind dss).
func (a *app) dssRunLayer(kind string) newLayer {
	return func(c *common) layer { return a.dssRun(kind, c) }
}

func (a *app) dssRun(kind string, c *common) layer {
	var b dssBuildFlags
	var streams, dop int
	var timeout time.Duration
	cfg := dss.RunConfig{Power: kind != "throughput", Throughput: kind != "power"}
	short := map[string]string{
		"power":      "Run the power test: RF1, the 22 queries in stream 0's order, RF2",
		"throughput": "Run the throughput test: S concurrent query streams and a refresh stream",
		"run":        "Run the power test, then the throughput test, and compute QphH",
	}[kind]
	example := map[string]string{
		"power":      "  calibra dss power --path /mnt/array --dop 4\n  calibra dss power --dsn postgres://bench@db1/bench --query-timeout 10m",
		"throughput": "  calibra dss throughput --streams 8 --path /mnt/array",
		"run":        "  calibra dss run --sf 0.1 --streams 2 --path /mnt/array\n  calibra dss run --streams 8 --dop 0 --query-timeout 30m",
	}[kind]
	cmd := &cobra.Command{
		Use:   kind,
		Short: short,
		Long: short + `, on the database
'calibra dss build' made. On the managed instance with no build, it builds at
--sf first and says so; with --dsn it asks for a build.

` + dssMetrics,
		Example: example,
	}
	plan := func(context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		b.validate(cmd, &p)
		if cfg.Throughput && cmd.Flags().Changed("streams") && streams <= 0 {
			p.add("give a whole number of 1 or more", "--streams %d is not positive", streams)
		}
		if dop < -1 {
			p.add("give 0 (no parallel workers) or more, or -1 for the server's setting", "--dop %d is below -1", dop)
		}
		if timeout < 0 {
			p.add("give a duration such as 10m, or 0 for none", "--query-timeout %s is negative", timeout)
		}
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		cfg.Streams, cfg.Seed, cfg.DOP, cfg.QueryTimeout = streams, c.seed, dop, timeout
		build := b.config(a)
		need := uint64(minFree)
		conns := max(streams, dss.MinStreams(b.sf)) + b.workers + 10
		return sessionNeeds{database: true, maxConns: conns, bytes: need}, dssRunBody(cfg, build), nil
	}
	b.register(cmd, true)
	f := cmd.Flags()
	if cfg.Throughput {
		f.IntVar(&streams, "streams", 0, "query streams of the throughput test (default: the specification's minimum for the scale factor, 2 up to SF 1)")
	}
	f.IntVar(&dop, "dop", -1, "degree of parallelism: max_parallel_workers_per_gather for every query; -1 keeps the server's setting")
	f.DurationVar(&timeout, "query-timeout", 0, "stop a query after this long and report it as timed out (default: no limit)")
	return layer{kind: results.KindDSS, cmd: cmd, plan: plan}
}

// dssRunBody runs the power and/or throughput test as one step. When the
// managed instance has no build, it builds first at build.ScaleFactor (1
// when 0); a build at another scale factor than one asked for is refused.
func dssRunBody(cfg dss.RunConfig, build dss.BuildConfig) stepFunc {
	return func(ctx context.Context, s *session) ([]results.Step, error) {
		var steps []results.Step
		bi, err := dss.Built(ctx, s.target)
		switch {
		case errors.Is(err, dss.ErrNotBuilt) && s.target.Managed == nil:
			return nil, fault.Input("build it first with 'calibra dss build --dsn ...'", "the database of --dsn holds no TPC-H-like schema")
		case errors.Is(err, dss.ErrNotBuilt):
			if build.ScaleFactor == 0 {
				build.ScaleFactor = 1
			}
			s.prog.Phase("dss: no TPC-H-like build on the managed instance; building scale factor %g first", build.ScaleFactor)
			st, err := dssBuildStep(ctx, s, build)
			steps = append(steps, st)
			if err != nil {
				return steps, err
			}
		case err != nil:
			return nil, err
		case build.ScaleFactor != 0 && bi.ScaleFactor != build.ScaleFactor:
			return nil, fault.Input(fmt.Sprintf("drop --sf, or rebuild with 'calibra dss build --sf %g --rebuild'", build.ScaleFactor),
				"the database is built at scale factor %g, not %g", bi.ScaleFactor, build.ScaleFactor)
		}
		started := time.Now()
		cfg.Edge = s.edge()
		out, err := dss.Run(ctx, s.target, cfg, s.prog)
		if out == nil {
			return steps, err
		}
		// The studies report storage bandwidth per test: each test gets
		// its own observations beside the step's.
		if s.obs != nil {
			if p := out.Power; p != nil && !p.FinishedAt.IsZero() {
				p.Observe = s.obs.Window(p.StartedAt, p.FinishedAt)
			}
			if th := out.Throughput; th != nil && !th.FinishedAt.IsZero() {
				th.Observe = s.obs.Window(th.StartedAt, th.FinishedAt)
			}
		}
		var tests []string
		if cfg.Power {
			tests = append(tests, "power")
		}
		if out.Throughput != nil {
			tests = append(tests, fmt.Sprintf("throughput %d streams", out.Throughput.Streams))
		}
		name := fmt.Sprintf("dss sf %g %s", out.ScaleFactor, strings.Join(tests, " + "))
		return append(steps, newStep(results.KindDSS, name, started, out)), err
	}
}

func writeDSSBuildSummary(b *strings.Builder, o *results.DSSBuild) {
	rows := "match the specification"
	if !o.RowCheck.OK {
		rows = "DIFFER: " + o.RowCheck.Detail
	}
	fmt.Fprintf(b, "  dss build  SF %g, %.0f MB in %.1f s = %.1f MB/s (load %.1f s, indexes %.1f s, analyze %.1f s); row counts %s\n",
		o.ScaleFactor, float64(o.DBBytes)/1e6, o.TotalS, o.MBPerS, o.LoadS, o.IndexS, o.AnalyzeS, rows)
}

func writeDSSSummary(b *strings.Builder, st results.Step, o *results.DSS) {
	fmt.Fprintf(b, "  dss        SF %g, max_parallel_workers_per_gather %s (%s)\n", o.ScaleFactor,
		o.Parallelism["max_parallel_workers_per_gather"], st.Status)
	indicative := o.Valid != nil && !*o.Valid
	metric := func(name string, v *float64, format, def string) {
		label := name
		if indicative && name == "qphh" {
			label += " (indicative)" // Power@Size and Throughput@Size too: the lines below say why
		}
		if v == nil {
			fmt.Fprintf(b, "  %-18s n/a        %s\n", label, o.Missing[name])
			return
		}
		fmt.Fprintf(b, "  %-18s "+format+"  %s\n", label, *v, def)
	}
	if p := o.Power; p != nil {
		metric("geomean_s", p.GeomeanS, "%10.3f s", "geometric mean of the power test's 22 query times")
		metric("power_at_size", p.PowerAtSize, "%10.1f  ", "3600 x SF / geomean of 22 queries + 2 refreshes, each rounded to 0.1 s")
	}
	if th := o.Throughput; th != nil {
		fmt.Fprintf(b, "  %-18s %10.1f s  %d query streams and a refresh stream\n", "throughput elapsed", th.ElapsedS, th.Streams)
		metric("throughput_at_size", th.ThroughputAtSize, "%10.1f  ", "S x 22 x 3600 / elapsed x SF")
	}
	if o.Power != nil && o.Throughput != nil {
		metric("qphh", o.QphH, "%10.1f  ", "sqrt(Power@Size x Throughput@Size)")
	}
	if indicative {
		for _, why := range o.InvalidReasons {
			fmt.Fprintf(b, "  %-18s %s\n", "indicative", why)
		}
	}
	storage := func(test string, d *results.Observe) {
		if d != nil && d.Disk != nil && d.Disk.RMBps != nil && d.Disk.WMBps != nil {
			fmt.Fprintf(b, "  %-18s %10.1f MB/s read, %.1f MB/s written over the %s\n", "storage", *d.Disk.RMBps, *d.Disk.WMBps, test)
		}
	}
	if o.Power != nil {
		storage("power test", o.Power.Observe)
	}
	if o.Throughput != nil {
		storage("throughput test", o.Throughput.Observe)
	}
	fmt.Fprintf(b, "  %s\n", o.Workload)
}
