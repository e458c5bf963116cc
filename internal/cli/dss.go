package cli

import (
	"context"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
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

func registerDSSBuild(cmd *cobra.Command, b *runner.DSSBuild, forRun bool) {
	f := cmd.Flags()
	if forRun {
		f.Float64Var(&b.SF, "sf", 0, "scale factor of the build (default: as built, or 1 when the managed instance has none and run builds first)")
	} else {
		f.Float64Var(&b.SF, "sf", 1, "scale factor: about 1 GB of data per unit; fractions such as 0.01 or 0.1 work")
		f.BoolVar(&b.Rebuild, "rebuild", false, "replace an existing build")
	}
	f.IntVar(&b.Workers, "load-workers", runtime.NumCPU(), "parallel generator + COPY pipelines")
	f.StringVar(&b.Tpchgen, "tpchgen", "", "the tpchgen-cli program (default: tpchgen-cli on PATH)")
}

func (a *app) dssBuildLayer(c *runner.Config) layer {
	var b runner.DSSBuild
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Generate and load the TPC-H-like tables at a scale factor",
		Long: `Create the eight TPC-H tables in the schema ` + runner.DSSSchema + ` and load them with
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
	registerDSSBuild(cmd, &b, false)
	return layer{cmd: cmd, plan: func(ctx context.Context) (runner.Needs, runner.StepFunc, error) {
		b.SFGiven = true
		return runner.PlanDSSBuild(ctx, c, b)
	}}
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

Queries: the specification's 22, in each engine's dialect (Q15's view a
common table expression; docs/dss.md), parameters drawn by qgen's rules from --seed, each
query's recorded. Streams run the orders of the specification's Appendix A:
stream 0 in the power test, streams 1..S in the throughput test.
Refresh: RF1 inserts SF x 1500 orders with their lines, RF2 deletes as many:
the new orders are copies of the oldest under new keys and RF2 deletes the
oldest, so every run starts from the same volumes and the database stays
re-runnable.`

// dssRunLayer is the power test, the throughput test, or both ("run",
// the study's kind dss).
func (a *app) dssRunLayer(kind string) newLayer {
	return func(c *runner.Config) layer { return a.dssRun(kind, c) }
}

func (a *app) dssRun(kind string, c *runner.Config) layer {
	r := runner.DSSRun{Test: kind}
	short := map[string]string{
		"power":      "Run the power test: RF1, the 22 queries in stream 0's order, RF2",
		"throughput": "Run the throughput test: S concurrent query streams and a refresh stream",
		"run":        "Run the power test, then the throughput test, and compute QphH",
	}[kind]
	example := map[string]string{
		"power":      "  calibra dss power --path /mnt/array --dop 4\n  calibra dss power --dsn " + runner.ExampleDSN() + " --query-timeout 10m",
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
	plan := func(context.Context) (runner.Needs, runner.StepFunc, error) {
		r.Build.SFGiven = cmd.Flags().Changed("sf")
		r.StreamsSet = cmd.Flags().Changed("streams")
		return runner.PlanDSSRun(c, r)
	}
	registerDSSBuild(cmd, &r.Build, true)
	f := cmd.Flags()
	if kind != "power" {
		f.IntVar(&r.Streams, "streams", 0, "query streams of the throughput test (default: the specification's minimum for the scale factor, 2 up to SF 1)")
	}
	f.IntVar(&r.DOP, "dop", -1, "degree of parallelism: max_parallel_workers_per_gather for every query; -1 keeps the server's setting")
	f.DurationVar(&r.QueryTimeout, "query-timeout", 0, "stop a query after this long and report it as timed out (default: no limit)")
	return layer{cmd: cmd, plan: plan}
}
