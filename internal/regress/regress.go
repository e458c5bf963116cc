// Package regress judges a run against a baseline, for CI: the results
// store's earlier runs of the same study on the same target. Per headline
// figure (those compare's summary puts first), it sets the run's values
// (its repeats) against the baseline's (every repeat of every baseline
// run) with compare's statistics, benchstat's: medians and the
// Mann-Whitney U test at compare.Alpha. A figure regressed when it moved
// its bad way beyond the allowed share and significantly.
package regress

import (
	"fmt"
	"math"
	"strings"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// MinN is the fewest values a side needs for a verdict.
const MinN = 3

// DefaultMaxRegressionPct is the change in the bad direction allowed.
const DefaultMaxRegressionPct = 5.0

// Sample is one figure's values on both sides.
type Sample struct {
	Key       store.FigureKey
	Title     string
	Unit      string
	Better    string // results.HigherIsBetter or LowerIsBetter
	Base, Run []float64
}

// RunSamples are a run's headline figures, each with its values over the
// run's complete steps of the same kind and name (the repeats), in the
// run's order.
func RunSamples(r *results.Run) []Sample {
	var out []Sample
	at := map[store.FigureKey]int{}
	for _, st := range r.Steps {
		if st.Status != results.StatusComplete {
			continue
		}
		for _, m := range results.Metrics(st) {
			if !compare.Headline(st.Kind, m.Name) || m.Better == "" {
				continue
			}
			k := store.FigureKey{Step: st.Kind + "/" + st.Name, Metric: m.Name}
			i, ok := at[k]
			if !ok {
				i, at[k] = len(out), len(out)
				out = append(out, Sample{Key: k, Title: compare.Title(st, m.Name), Unit: m.Unit, Better: m.Better})
			}
			out[i].Run = append(out[i].Run, m.Value)
		}
	}
	return out
}

// Judge fills b's figures and verdict from the samples, each with its
// baseline values set: the run regressed when one figure did.
func Judge(b *results.Baseline, samples []Sample) {
	b.Alpha = compare.Alpha
	b.Figures = nil
	var regressed, judged []string
	for _, s := range samples {
		if len(s.Base) == 0 {
			continue
		}
		f := judgeFigure(s, b.MaxRegressionPct)
		b.Figures = append(b.Figures, f)
		if f.P != nil {
			judged = append(judged, f.Title)
		}
		if f.Regressed {
			regressed = append(regressed, fmt.Sprintf("%s %s %.1f%% (p=%.3f)", f.Title, moved(f), math.Abs(*f.DeltaPct), *f.P))
		}
	}
	switch {
	case len(b.Figures) == 0:
		b.Verdict, b.Reason = results.BaselineNone, "the run and its baseline share no headline figure (the same step, kind and name, and metric)"
	case len(regressed) > 0:
		b.Verdict, b.Regressed = results.BaselineRegressed, true
		b.Reason = fmt.Sprintf("%s: beyond the %s%% allowed, significantly (p < %g)", strings.Join(regressed, "; "), results.Num(b.MaxRegressionPct), compare.Alpha)
	case len(judged) == 0:
		b.Verdict, b.Reason = results.BaselineNone, tooFew(b.Figures[0])
	default:
		b.Verdict, b.Reason = results.BaselinePass, ""
	}
}

// judgeFigure judges one figure.
func judgeFigure(s Sample, maxPct float64) results.BaselineFigure {
	f := results.BaselineFigure{Step: s.Key.Step, Metric: s.Key.Metric, Title: s.Title, Unit: s.Unit, Better: s.Better,
		BaseMedian: results.Median(s.Base), RunMedian: results.Median(s.Run), BaseN: len(s.Base), RunN: len(s.Run)}
	if f.BaseMedian != 0 {
		pct := (f.RunMedian/f.BaseMedian - 1) * 100
		f.DeltaPct = &pct
	}
	switch {
	case f.BaseN < MinN || f.RunN < MinN:
		f.Verdict = fmt.Sprintf("no verdict (n=%d against %d; %d a side needed)", f.RunN, f.BaseN, MinN)
		return f
	case compare.MinP(f.RunN, f.BaseN) >= compare.Alpha:
		f.Verdict = fmt.Sprintf("no verdict (n=%d against %d: the U test cannot reach p < %g)", f.RunN, f.BaseN, compare.Alpha)
		return f
	case f.DeltaPct == nil:
		f.Verdict = "no verdict (the baseline's median is zero)"
		return f
	}
	p := compare.UTest(s.Base, s.Run)
	f.P = &p
	pct := *f.DeltaPct
	worse := pct != 0 && (pct > 0) != (s.Better == results.HigherIsBetter)
	significant := p < compare.Alpha
	switch {
	case !significant && worse:
		f.Verdict = "worse within noise"
	case !significant:
		f.Verdict = "~"
	case !worse:
		f.Verdict = "better"
	case math.Abs(pct) <= maxPct:
		f.Verdict = "worse within the allowance"
	default:
		f.Verdict, f.Regressed = results.BaselineRegressed, true
	}
	return f
}

// moved says which way a figure moved: "fell" or "rose".
func moved(f results.BaselineFigure) string {
	if f.DeltaPct != nil && *f.DeltaPct < 0 {
		return "fell"
	}
	return "rose"
}

// tooFew says, in a sentence, why no figure could be judged.
func tooFew(f results.BaselineFigure) string {
	if f.RunN < MinN || f.BaseN < MinN {
		return fmt.Sprintf("the run has %s of each figure and its baseline %d: a verdict needs %d a side (repeat the study's steps, e.g. --set KIND.repeat=3, or take more stored runs with --baseline-runs)", results.Plural(f.RunN, "value"), f.BaseN, MinN)
	}
	return fmt.Sprintf("with %d values against %d the U test's smallest p-value is %.2f, so no change can be significant at %g: repeat more (4 a side, or 3 against 5 or more)",
		f.RunN, f.BaseN, compare.MinP(f.RunN, f.BaseN), compare.Alpha)
}
