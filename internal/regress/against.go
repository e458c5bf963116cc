package regress

import (
	"context"
	"fmt"
	"slices"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// Last is --baseline's value for the most recent earlier runs.
const Last = "last"

// DefaultRuns is how many stored runs make a baseline by default.
const DefaultRuns = 3

// Options are what --baseline, --baseline-runs and --max-regression ask.
type Options struct {
	Spec             string // Last or a label
	Runs             int    // at most this many stored runs, newest first
	MaxRegressionPct float64
}

// Against judges run r (recorded in the store under id, or to be) against
// its baseline in s: with Last, the most recent good runs of the same
// target that started before it (store.Baseline); with a label, the most
// recent good runs of that label. s may be nil: a store with no run yet.
func Against(ctx context.Context, s *store.Store, r *results.Run, id string, o Options) (*results.Baseline, error) {
	t := store.TargetOf(r)
	b := &results.Baseline{Spec: o.Spec, Runs: []string{}, Target: t.String(), MaxRegressionPct: o.MaxRegressionPct, Alpha: compare.Alpha}
	if r.Status != results.StatusComplete {
		b.Verdict, b.Reason = results.BaselineNone, fmt.Sprintf("the run is %s: only a complete run is judged", r.Status)
		return b, nil
	}
	q := store.BaselineQuery{Target: t, Before: r.StartedAt, Exclude: id, Limit: o.Runs}
	which := "earlier"
	if o.Spec != Last {
		q.Label, which = o.Spec, "labelled "+o.Spec
	}
	var runs []store.BaselineRun
	if s != nil {
		p, err := s.Baseline(ctx, q)
		if err != nil {
			return nil, err
		}
		runs, b.LeftOut, b.NoCopy = p.Runs, p.LeftOut, p.NoCopy
	}
	if len(runs) == 0 {
		b.Verdict, b.Reason = results.BaselineNone, fmt.Sprintf("the results store holds no complete %s run of the same target (%s) that did not regress", which, t)
		return b, nil
	}
	samples := RunSamples(r)
	for _, run := range runs {
		base, err := results.Decode(run.Results, "the store's copy of "+run.ID+"'s results.json")
		if err != nil {
			return nil, err
		}
		b.Runs = append(b.Runs, run.ID)
		if run.Label != "" && !slices.Contains(b.Labels, run.Label) {
			b.Labels = append(b.Labels, run.Label)
		}
		AddBase(samples, base)
	}
	Judge(b, samples)
	return b, nil
}
