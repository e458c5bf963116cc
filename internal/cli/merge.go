package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/merge"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) mergeCommand() *cobra.Command {
	var cfg merge.Config
	cmd := &cobra.Command{
		Use:   "merge RUNDIR...",
		Short: "Combine the run directories of a split oltp run (oltp run --partition) into one",
		Long: `Combine the run directories that N processes wrote with 'calibra oltp run
--partition i/N --start-at T' into one run directory, as if one process had
driven every user, and write its report.html and report.md:

  nopm, tpm_db, checkpoints   partition 1/N's, which read the database's
                              counters at its window's edges
  tpm_client, counts, users   every partition's, added up
  latency percentiles         from every partition's window histograms
                              (raw/oltp-window.hlog), merged
  ART                         the mean of every partition's transactions
  mix and input checks        judged again on the summed counts
  raw/oltp-latency.hlog       the partitions' one-second histograms, added
                              second by second
  partitions[]                each partition: its directory, host, users,
                              tpm_client and ART

Every partition of one run must be given, once: the same N, --start-at,
--users, --warehouses, mode, profile, pacing, ramp-up and seed, on the same
server; anything else is refused and nothing is written.`,
		Example: `  calibra merge part-1 part-2 part-3 --out merged
  calibra merge calibra-runs/*_p?of3`,
		Args: wantArgs(1, -1, "the partitions' run directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Dirs, cfg.ToolVersion = args, Version
			if err := results.CheckLabel("--label", cfg.Label); err != nil {
				return err
			}
			out, err := merge.Merge(cfg)
			if err != nil {
				return err
			}
			recorded := a.record(cmd.Context(), out)
			if r, err := results.Load(out); err == nil {
				fmt.Fprint(a.stdout, results.TerminalText(runner.SummaryText(r, r.Status))) // as the run printed it
			}
			fmt.Fprintln(a.stdout, results.TerminalLine(filepath.Join(out, "report.html")))
			if recorded != "" {
				fmt.Fprintln(a.stderr, recorded)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cfg.Out, "out", "", "merged run directory (default ./calibra-runs/<UTC time>_<label>-merged); must not hold files")
	cmd.Flags().StringVar(&cfg.Label, "label", "", "names the merged run (default: the partitions' label)")
	return cmd
}
