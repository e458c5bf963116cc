package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/safefs"
)

func (a *app) reportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report RUNDIR",
		Short: "Rebuild report.html and report.md of a run directory from its results.json",
		Long: `Rebuild a run directory's report.html (one self-contained page that works
offline: headline figures, the studies' charts per layer, the tables, the
environment and the metric definitions) and report.md (the headline tables,
for pasting into tickets) from its results.json and, when present,
timeseries.csv, and print the run's summary on stdout, the one the run printed
at its end. Every running command writes both reports at its end; use this
after an upgrade of calibra or to make them again.`,
		Example: `  calibra report calibra-runs/20260302T140511Z_nvme`,
		Args:    wantArgs(1, 1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The run is read as another account's may be; its reports
			// are written by name, so only into a directory no other
			// account can change.
			if _, err := results.Load(args[0]); err != nil {
				return wrap(err)
			}
			if err := safefs.CheckDir(args[0], "run calibra report as that account, or copy the run directory into one of your own"); err != nil {
				return err
			}
			if err := report.Write(args[0]); err != nil {
				return wrap(err)
			}
			if r, err := results.Load(args[0]); err == nil {
				fmt.Fprint(a.stdout, results.TerminalText(runner.SummaryText(r, r.Status))) // as the run printed it
			}
			fmt.Fprintln(a.stdout, results.TerminalLine(filepath.Join(args[0], "report.html")))
			fmt.Fprintln(a.stdout, results.TerminalLine(filepath.Join(args[0], "report.md")))
			return nil
		},
	}
}
