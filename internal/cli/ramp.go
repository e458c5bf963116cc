package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) oltpRampLayer(c *runner.Config) layer {
	var r runner.Ramp
	cmd := &cobra.Command{
		Use:   "ramp",
		Short: "Ramp the users to a response-time SLA: max TPS and max users within the SLA",
		Long: `The Benchmark Factory study's question: how many users can this storage serve
within a response-time SLA? Run a timed window at each user load from --from
to --to by --step, each with its own warm-up, and judge each against --sla:

  tps                    transactions completed per second in the window
  art_ms / p90_ms        mean and 90th-percentile response time of all
                         transactions of the window (HDR histograms)
  max_tps                the highest TPS of any load
  max_users_within_sla   the highest load whose --sla-metric stayed at or
                         under --sla
  art_at_ms              the ART at the load named by --art-at
  little_users           Little's law: TPS x (response + mean think time),
                         to compare with the users actually running; a big
                         gap means the driver, not the database, set the pace

The ramp stops at the first load over the SLA, when TPS falls more than
--fall below the best so far (the system is past saturation), or, in an open
loop, when the achieved TPS falls that far short of the offered rate.

A closed loop (the default) runs users back to back, or with the
specification's keying and think times (--keying-thinking on or a scale). An
open loop (--rate-per-user R) offers R transactions a second per user on a
fixed schedule and measures latency from the scheduled start.`,
		Example: `  calibra oltp ramp --warehouses 4 --from 2 --to 32 --step 2 --sla 2s --path /mnt/array
  calibra oltp ramp --from 10 --to 100 --step 10 --keying-thinking 0.05 --sla 50ms --sla-metric p90
  calibra oltp ramp --from 4 --to 64 --step 4 --rate-per-user 20 --sla 20ms --art-at 32`,
	}
	registerLoad(cmd, &r.Load, 5*time.Second, 20*time.Second, "each load's")
	f := cmd.Flags()
	f.IntVar(&r.From, "from", 1, "users of the first load")
	f.IntVar(&r.To, "to", 16, "users of the last load")
	f.IntVar(&r.By, "step", 1, "users added at each load")
	f.DurationVar(&r.SLA, "sla", 2*time.Second, "the response-time SLA (the study's 2 s ART)")
	f.StringVar(&r.SLAMetric, "sla-metric", runner.DefaultSLAMetric, "what the SLA bounds: art (mean) or p90")
	f.IntVar(&r.ARTAt, "art-at", 0, "report the ART at this user load (0: none)")
	f.Float64Var(&r.Fall, "fall", 5, "stop when TPS falls more than this per cent below the best so far")
	return layer{cmd: cmd, plan: func(context.Context) (runner.Needs, runner.StepFunc, error) {
		r.Load.WarehousesSet = cmd.Flags().Changed("warehouses")
		return runner.PlanRamp(c, r)
	}}
}
