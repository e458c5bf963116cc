package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) oltpScaleLayer(c *runner.Config) layer {
	var sc runner.Scale
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Run one load on 1, 2, 4... instances side by side: NOPM, TPM and latency against servers",
		Long: `The studies' node scaling (000 Fig 20, 004 Figs 1-4), on instances side by
side on the same storage: start --instances N managed instances, build each
(when none is built), then run the same timed window on the first k of them
for each k of --servers, the --users dealt round-robin over those k. Each
point is a timed run of its own, measured from every server's counters:

  nopm / tpm_db    the k servers' sums, each read from its own counters
  tpm_client       transactions completed per minute, client-side
  art_ms / p90_ms  response time of all transactions of the window
  disk_await_ms    the data device's await over the window, with the
                   data-file read and WAL sync means where the server
                   gives them, and what limited the point (limited_by)
  max_nopm         the highest NOPM of any point

Unlike RAC nodes, the instances share no data: each holds --warehouses of
its own, as a consolidated server holds several databases.`,
		Example: `  calibra oltp scale --instances 4 --servers 1,2,4 --users 16 --warehouses 4 --path /mnt/array
  calibra oltp scale --instances 2 --servers 1,2 --users 8 --duration 1m --path /mnt/array`,
	}
	registerLoad(cmd, &sc.Load, 5*time.Second, 20*time.Second, "each point's")
	f := cmd.Flags()
	f.IntVar(&sc.Users, "users", 8, "virtual users in all, dealt round-robin over each point's servers")
	f.StringVar(&sc.Servers, "servers", "1,2", "rising counts of servers, each a point, up to --instances")
	return layer{cmd: cmd, plan: func(context.Context) (runner.Needs, runner.StepFunc, error) {
		sc.Load.WarehousesSet = cmd.Flags().Changed("warehouses")
		return runner.PlanScale(c, sc)
	}}
}
