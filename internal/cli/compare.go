package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/regress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

func (a *app) compareCommand() *cobra.Command {
	var format, html string
	var bl baselineFlags
	cmd := &cobra.Command{
		Use:   "compare BASE OTHER...",
		Short: "Set runs side by side: every shared metric with its delta against the base",
		Long: `Compare runs: first a headline summary, the figures the studies headline
(max TPS, ART at a load every run reached and users within the SLA of a ramp,
NOPM, each device spec's answer, iocal's maxima, QphH) as bars of their change
against the base (the first run); then every metric the runs share, grouped by
step, by readable name, with its direction (↑ higher is better, ↓ lower; CPU
busy and I/O wait have none: they are evidence, shown but never judged), its
value in each run, its change in percent, and what limited the step in each
run ("cache → storage").

A change between single runs is a value with "n=1, no verdict", never better
or worse: one run on a shared machine cannot tell a change from noise. Steps
of the same kind and name in one run count as repetitions: the value is then
their median with its spread, and the change is tested as benchstat does
(Mann-Whitney U test; "~" when p ≥ 0.05, no significant difference; it needs
4 or more repetitions a side to find one). Footnotes name what differs between
the runs besides the storage (engine version, warehouses, settings, flags),
steps whose comparison is doubtful (CPU busy differs by 20 points and 1.5x at
the same load, what limited them differs, or another load on the host limited
them), and runs that were interrupted or failed.

With --baseline last|LABEL, compare judges one run directory against the
results store's runs of the same study on the same target, as 'calibra run
--baseline' does (see its help), prints the verdict and exits 3 when a
headline figure regressed; it writes nothing.`,
		Example: `  calibra compare calibra-runs/20260302T140511Z_hdd calibra-runs/20260302T151200Z_flash
  calibra compare base/ new/ --format csv > deltas.csv
  calibra compare base/ new/ --html compare.html
  calibra compare --baseline last calibra-runs/20260303T020000Z_nightly`,
		Args: func(cmd *cobra.Command, args []string) error {
			if bl.spec != "" {
				return wantArgs(1, 1, "one run directory with --baseline")(cmd, args)
			}
			return wantArgs(2, -1, "two or more run directories")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(compare.Formats, format) {
				return fault.Input("use "+strings.Join(compare.Formats, ", "), "--format %q is not a compare format", format)
			}
			if err := bl.check(cmd, a.store); err != nil {
				return err
			}
			if bl.spec != "" {
				if html != "" {
					return fault.Input("drop --html, or compare two run directories", "--html draws a comparison of run directories, and --baseline judges one against the store")
				}
				return a.compareBaseline(cmd, bl, args[0], format)
			}
			return a.compareRuns(args, format, html)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output on stdout: text, md, csv or json")
	cmd.Flags().StringVar(&html, "html", "", "also write an HTML page with the table and the runs' curves overlaid")
	bl.register(cmd)
	return cmd
}

// compareRuns sets the run directories dirs side by side in format on
// stdout, and draws them in the HTML page html when given.
func (a *app) compareRuns(dirs []string, format, html string) error {
	runs, err := compare.Load(dirs)
	if err != nil {
		return err
	}
	t, err := compare.Compare(runs)
	var nc *compare.NoCommonStepError
	if errors.As(err, &nc) {
		return fault.Input("compare runs of the same layers (calibra report RUNDIR shows each run alone)", "%v", err)
	}
	if err != nil {
		return wrap(err)
	}
	if html != "" {
		var b bytes.Buffer
		if err := compare.HTML(&b, t, runs); err != nil {
			return wrap(err)
		}
		// Written by name: only into a directory no other account can change.
		if dir := filepath.Dir(html); exists(dir) {
			if err := safefs.CheckDir(dir, "give a --html file in a directory only calibra's account (or root) can write to"); err != nil {
				return err
			}
		}
		if err := results.WriteFileAtomic(html, b.Bytes()); err != nil {
			return fault.Input("choose a --html file in a directory you can write to", "cannot write %s: %v", html, err)
		}
	}
	return wrap(t.Write(a.stdout, format))
}

// compareBaseline judges the run directory dir against its baseline in
// the store, prints the verdict and fails with exit 3 on a regression.
func (a *app) compareBaseline(cmd *cobra.Command, bl baselineFlags, dir, format string) error {
	r, err := results.Load(dir)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	b, err := a.judge(cmd.Context(), bl.options(), abs, r)
	if err != nil {
		return err
	}
	if err := regress.Write(a.stdout, b, format); err != nil {
		return err
	}
	if b.Regressed {
		return &fault.RegressionError{Reason: b.Reason}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
