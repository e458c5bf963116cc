package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/runner"
)

const profileHelp = `Capture a running database's I/O shape from its own counters, read-only:
page reads and writes a second, the cache hit ratio, commits, WAL bytes a
commit and syncs a second, the active sessions (sampled every 200 ms), the
database's size and cache, the share of bulk reads; and, when the server is
on this machine, what the data's device did. The profile is a small YAML of
rates and shapes (docs/profile.md), never data or SQL text: safe to send to
a storage vendor. 'calibra run --profile FILE --path DIR' replays it on other
storage and says how much headroom that storage has.

The server is an existing one (--dsn: its role needs read-only statistics of
every session, checked first, and the GRANT named when it lacks them) or the
managed instance
another calibra command runs under --path (an oltp run), reached without
starting or changing anything.`

func (a *app) profileCommand() *cobra.Command {
	var c runner.Config
	var d time.Duration
	var out string
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Capture a running database's I/O shape (rates and shapes, no data) for a replay",
		Long:  profileHelp,
		Example: `  # While 'calibra oltp run --path /mnt/array' runs
  calibra profile --path /mnt/array --duration 20s --out prof.yaml
  calibra run --profile prof.yaml --path /mnt/candidate

  # A production server (read-only statistics)
  calibra profile --dsn ` + runner.ExampleDSN() + ` --duration 5m --out prod.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runner.Profile(cmd.Context(), a.env(), &c, d, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Path, "path", ".", "directory on the storage under test where another calibra command runs the managed instance")
	f.StringVar(&c.Engine, "engine", "", "the database engine (default "+runner.DefaultEngine()+", or what --dsn's scheme names)")
	f.StringVar(&c.DSN, "dsn", "", "profile an existing server ("+runner.DSNForms()+"; the password from --dsn-file or the driver's own sources)")
	f.StringVar(&c.DSNFile, "dsn-file", "", "read --dsn from this file (keep it 0600)")
	f.StringVar(&c.Progress, "progress", progress.Auto, "progress on stderr: auto, plain or none")
	f.DurationVar(&d, "duration", 30*time.Second, "the window the counters are read over")
	f.StringVar(&out, "out", "", "write the profile to this file (default: standard output)")
	return cmd
}

// replayLayer is a replay step; 'calibra run --profile' makes a study of it.
func (a *app) replayLayer(c *runner.Config) layer {
	var f runner.Replay
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Replay a profile through the database on the storage under test, then step it up to the SLA",
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Profile, "profile", "", "the profile to replay (written by calibra profile --out FILE)")
	fl.StringVar(&f.SLA, "sla", runner.ReplayDefaultSLA, "the latency bound each multiple of the profile must keep")
	fl.Float64Var(&f.Scale, "scale", 1, "the replay's data against the profile's database size")
	fl.DurationVar(&f.Window, "window", 30*time.Second, "timed window of each multiple")
	fl.DurationVar(&f.Warmup, "warmup", 10*time.Second, "unmeasured run before each multiple, and the calibration at 1x")
	fl.Float64Var(&f.MaxMultiple, "max-multiple", 16, "the most the stepping asks, as a multiple of the profile")
	fl.IntVar(&f.Loaders, "loaders", runner.IOCalDefaultLoaders(), "parallel loaders (and tables) of the replay's data")
	plan := func(ctx context.Context) (runner.Needs, runner.StepFunc, error) { return runner.PlanReplay(ctx, c, f) }
	return layer{cmd: cmd, plan: plan}
}
