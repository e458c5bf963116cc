package cli

import (
	"context"
	"errors"
	"math"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/regress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// baselineFlags are --baseline and its companions, of run and compare.
type baselineFlags struct {
	spec   string
	runs   int
	maxPct float64
}

func (f *baselineFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.spec, "baseline", "", "judge the run against the results store's runs of the same study on the same target: last (the most recent earlier ones) or LABEL (that label's most recent); exit 3 when a headline figure regressed beyond --max-regression, significantly (docs/store.md)")
	fl.IntVar(&f.runs, "baseline-runs", regress.DefaultRuns, "with --baseline: how many stored runs, newest first, make the baseline (each with every repeat it ran)")
	fl.Float64Var(&f.maxPct, "max-regression", regress.DefaultMaxRegressionPct, "with --baseline: the change in percent in a headline figure's bad direction allowed before a significant one fails the command")
}

// check checks the flags before anything runs: the baseline needs a
// store to be read from.
func (f *baselineFlags) check(cmd *cobra.Command, s store.Spec) error {
	fl := cmd.Flags()
	if f.spec == "" {
		for _, name := range []string{"baseline-runs", "max-regression"} {
			if fl.Changed(name) {
				return fault.Input("add --baseline last or --baseline LABEL", "--%s judges against a baseline, and no --baseline was given", name)
			}
		}
		return nil
	}
	switch {
	case s.None:
		return fault.Input("give --store "+store.Forms+" (the store the baseline's runs are in), or drop --baseline", "--baseline reads the results store, which is off (--store none)")
	case f.runs < 1:
		return fault.Input("give 1 or more", "--baseline-runs %d is not a number of runs", f.runs)
	case math.IsNaN(f.maxPct) || math.IsInf(f.maxPct, 0) || f.maxPct < 0:
		return fault.Input("give a share in percent, 0 or more, e.g. 5", "--max-regression %v is not a share of change", f.maxPct)
	}
	return nil
}

func (f *baselineFlags) options() regress.Options {
	return regress.Options{Spec: f.spec, Runs: f.runs, MaxRegressionPct: f.maxPct}
}

// judge judges the run in dir against its baseline in the results store;
// a store that does not exist yet holds no baseline.
func (a *app) judge(ctx context.Context, o regress.Options, dir string, r *results.Run) (*results.Baseline, error) {
	s, err := a.openSpec(ctx, store.ReadOnly)
	switch {
	case errors.Is(err, store.ErrNoStore):
		s = nil
	case err != nil:
		return nil, err
	default:
		defer s.Close()
	}
	return regress.Against(ctx, s, r, store.RunID(dir, r), o)
}
