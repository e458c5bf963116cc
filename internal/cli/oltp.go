package cli

import (
	"context"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
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
	cmd.AddCommand(a.command(a.oltpBuildLayer), a.command(a.oltpRunLayer), a.command(a.oltpRampLayer), a.command(a.oltpScaleLayer), a.command(a.oltpCheckLayer))
	return cmd
}

func registerBuild(cmd *cobra.Command, b *runner.OLTPBuild, forRun bool) {
	if forRun {
		cmd.Flags().IntVar(&b.Warehouses, "warehouses", 0, "warehouses of the built schema (default: as built, or 1 when run has to build first)")
	} else {
		cmd.Flags().IntVar(&b.Warehouses, "warehouses", 1, "warehouses to build (about 110 MB each)")
		cmd.Flags().BoolVar(&b.Rebuild, "rebuild", false, "replace an existing build")
	}
	cmd.Flags().IntVar(&b.Workers, "load-workers", runtime.NumCPU(), "parallel loader connections")
}

func (a *app) oltpBuildLayer(c *runner.Config) layer {
	var b runner.OLTPBuild
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Create and load the TPC-C-like schema",
		Long: `Create the nine TPC-C tables and load them with data generated as the
specification says (NURand, last-name syllables, 10% ORIGINAL...), in parallel
with COPY; then add keys and indexes, vacuum and analyze, and check the
consistency conditions 3.3.2.1 to 3.3.2.4. On the managed instance the loaded
database is kept as a template so later runs can start from a clean copy.`,
		Example: `  calibra oltp build --warehouses 10 --path /mnt/array
  calibra oltp build --warehouses 4 --dsn ` + runner.ExampleDSN() + ` --rebuild`,
	}
	registerBuild(cmd, &b, false)
	return layer{cmd: cmd, plan: func(context.Context) (runner.Needs, runner.StepFunc, error) {
		return runner.PlanOLTPBuild(c, b)
	}}
}

// registerLoad registers the flags of what a timed run and a ramp share:
// the schema, the mode, the pacing and the timing of each window.
func registerLoad(cmd *cobra.Command, l *runner.OLTPLoad, rampup, duration time.Duration, per string) {
	registerBuild(cmd, &l.Build, true)
	f := cmd.Flags()
	f.StringVar(&l.Mode, "mode", runner.DefaultOLTPMode, "procedures (stored procedures, one call a transaction, as HammerDB), client (SQL from calibra, pipelined and set-oriented: a few round trips a transaction) or client-simple (one prepared statement a round trip, as go-tpc)")
	f.StringVar(&l.Profile, "profile", runner.DefaultOLTPProfile, "spec (mix 45/43/4/4/4, NURand items and customers) or hammerdb (its driver's 10/10/1/1/1 of 23, uniform items and customers): their numbers differ")
	f.StringVar(&l.Keying, "keying-thinking", "off", "closed loop with the specification's keying and think times: off, on, or a scale such as 0.1")
	f.Float64Var(&l.RatePerUser, "rate-per-user", 0, "open loop: each user starts this many transactions a second on a fixed schedule (0: closed loop)")
	f.IntVar(&l.Connections, "connections", 0, "serve the users as terminals on this many connections, fewer than users (a transaction monitor): a transaction waits for a free one, and its latency counts the wait; 0: a connection per user")
	f.IntVar(&l.DriverThreads, "driver-threads", 0, "threads of the polling driver (the loads an engine's dialect polls, a connection a user), each polling its share of the users' sockets; 0: one for every 64 users, at most one for each core calibra may use")
	f.StringVar(&l.Driver, "driver", runner.DriverAuto, "auto (the polling driver where the engine's dialect polls the mode, else a goroutine a user) or goroutines (a goroutine a user, to compare)")
	f.DurationVar(&l.Rampup, "rampup", rampup, "warm-up before "+per+" timed window (not measured)")
	f.DurationVar(&l.Duration, "duration", duration, "length of "+per+" timed window")
	f.BoolVar(&l.Reset, "reset", false, "recreate the database from its loaded template first (managed instance)")
}

func (a *app) oltpRunLayer(c *runner.Config) layer {
	var l runner.OLTPLoad
	var users int
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a timed TPC-C-like window and measure NOPM, TPM and response times",
		Long: `Start every virtual user, each with a connection of its own or one borrowed
from --connections, run the ramp-up, then measure the timed window only.
Where the engine's dialect polls (docs/driver-performance.md), each user with
its own connection runs as a state machine on a few threads polling their sockets (results:
driver.model polling, driver.threads; --driver-threads), so the driver costs
little CPU; the other loads, or --driver goroutines, run a goroutine a user
(goroutines). Measured:

  NOPM        committed New-Orders per minute: the growth of sum(d_next_o_id)
              over the window, read at its two edges
  tpm_db      the database's commits + rollbacks per minute, by its own count
              (its statistics views, docs/oltp.md), database-specific
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
uniformly, as HammerDB's driver does, to reproduce a HammerDB figure; its
NOPM reads about 3.5% lower than the spec profile's at equal throughput.

With --keying-thinking off (the default, as HammerDB) users run back to back
(a closed loop) and latency is service time. With on or a scale, each user
is a terminal bound to a home warehouse and district with the
specification's keying and think times, and latency runs from the intended
start (response time). With --rate-per-user R (an open loop) each user starts
a transaction every 1/R s on a fixed schedule whatever the last one took, and
latency runs from the scheduled start, so a slow system's queueing is
counted (coordinated omission corrected).

With --connections C below --users, the users are terminals that C
connections serve, as a TPC-C transaction monitor may: a transaction waits
for a free connection, its latency counts the wait from its terminal's
intended start, and the wait is reported on its own (queue). So thousands of
terminals with keying and think times run against a server with a bounded
number of backends.

On the managed instance with no schema, run builds one first and says so.

Load from many hosts: --partition i/N on N processes (pods, hosts) against
one existing server (--dsn or --dsn-file), all with the same flags and the
same --start-at, splits the users by home warehouse: partition i drives the
users whose home warehouse w has (w-1) mod N = i-1, so that together they are
the users of one process's run (--users and --warehouses count the whole
run). Each writes its own run directory; partition 1/N reads the database's
counters at the window edges (NOPM, tpm_db), the others measure the client
side. 'calibra merge DIR...' combines them into one run.`,
		Example: `  calibra oltp run --warehouses 2 --users 4 --rampup 5s --duration 30s --path /mnt/array
  calibra oltp run --users 8 --mode client --duration 5m
  calibra oltp run --warehouses 10 --users 100 --keying-thinking 0.1 --reset
  calibra oltp run --users 16 --rate-per-user 50 --duration 2m
  calibra oltp run --warehouses 100 --users 1000 --connections 32 --keying-thinking 0.1
  calibra oltp run --dsn-file /etc/calibra/dsn --users 96 --partition 2/3 --start-at 2026-03-02T14:05:00Z`,
	}
	// HammerDB's defaults: a steady state includes checkpoints, which a
	// minute after a fresh start rarely does.
	registerLoad(cmd, &l, 2*time.Minute, 5*time.Minute, "the")
	cmd.Flags().IntVar(&users, "users", 4, "virtual users, each with its own connection")
	cmd.Flags().StringVar(&l.Partition, "partition", "", "drive share i of N of the users (those whose home warehouse w has (w-1) mod N = i-1) on the --dsn server, beside N-1 other calibra processes; 1/N also reads the database's counters; merge the run directories with 'calibra merge'")
	cmd.Flags().StringVar(&l.StartAt, "start-at", "", "connect the users, then start them at this instant (RFC 3339, such as 2026-03-02T14:05:00Z, or Unix seconds), so that partitions run their ramp-up and window together")
	return layer{cmd: cmd, plan: func(context.Context) (runner.Needs, runner.StepFunc, error) {
		l.WarehousesSet = cmd.Flags().Changed("warehouses")
		return runner.PlanOLTPRun(c, l, users)
	}}
}

func (a *app) oltpCheckLayer(c *runner.Config) layer {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the TPC-C consistency conditions 3.3.2.1 to 3.3.2.4",
	}
	return layer{cmd: cmd, plan: func(context.Context) (runner.Needs, runner.StepFunc, error) {
		return runner.PlanOLTPCheck(c)
	}}
}
