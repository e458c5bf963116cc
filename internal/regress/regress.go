// Package regress judges a run against a baseline, for CI: the results
// store's earlier good runs of the same study on the same target. Per
// headline figure (those compare's summary puts first), it sets the run's
// values (its repeats) against the baseline's (every repeat of every
// baseline run) with compare's statistics, benchstat's: medians and the
// Mann-Whitney U test, its p-values adjusted for the figures tested
// together (Holm). A figure regressed when it moved its bad way
// significantly and beyond the allowance: --max-regression, or what the
// baseline runs' own run-to-run spread lets one more good run do, if
// more. A repeat with no point under a figure's bound ranks below every
// value that met it: slower storage never makes a figure vanish.
package regress

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// MinN is the fewest values a side needs for a verdict.
const MinN = 3

// DefaultMaxRegressionPct is the change in the bad direction allowed.
const DefaultMaxRegressionPct = 5.0

// Sample is one figure's values on both sides.
type Sample struct {
	Key    store.FigureKey
	Title  string
	Unit   string
	Better string // results.HigherIsBetter or LowerIsBetter
	// Cond is what the figure was measured under (a device spec's shape
	// and bound): only values measured under the same are compared.
	Cond string
	// Bound is the bound a value had to meet, in words ("p99 ≤ 1 ms").
	Bound string
	// Run and Base are the values that met the bound; the Missed counts
	// the repeats that did not.
	Run, Base             []float64
	RunMissed, BaseMissed int
	// BaseAt is the p99 (µs) of each baseline value's point, for the
	// sentence of a run that missed the bound.
	BaseAt []float64
	// BaseRuns is each baseline run's median, for their spread.
	BaseRuns []float64
	// RunHost and BaseHost are the shares of the machine that processes
	// outside calibra used in each repeat another load on the host
	// limited (verdict's "host"): that repeat measured the host, not the
	// storage.
	RunHost, BaseHost []float64
	// RunAwait and BaseAwait are the device's own service time (the
	// kernel's await, ms) in each repeat where it was measured: what
	// tells slower storage from a busy host.
	RunAwait, BaseAwait []float64
	// OtherCond is a baseline run's Cond that differed from the run's.
	OtherCond string
}

// value is one repeat of a headline figure in one run.
type value struct {
	key                 store.FigureKey
	title, unit, better string
	cond, bound         string
	v, at               float64
	missed              bool
	// host is the outside share of the machine when another load on the
	// host limited the value's point; nil otherwise. await is the
	// device's await at that point; nil where not measured.
	host, await *float64
}

// headlineValues are a run's headline figures over its complete steps,
// in the run's order: a device spec's figure at its bound even where no
// point met it (missed), so that the figure is there in every run of the
// same study step.
func headlineValues(r *results.Run) []value {
	var out []value
	for _, st := range r.Steps {
		if st.Status != results.StatusComplete {
			continue
		}
		step := st.Kind + "/" + st.Name
		if d, ok := st.Body.(*results.Device); ok {
			for _, sp := range d.Specs {
				out = append(out, deviceValue(st, step, d, sp))
			}
			continue
		}
		host, await := limits(stepLimit(st))
		for _, m := range results.Metrics(st) {
			if compare.Headline(st.Kind, m.Name) && m.Better != "" {
				out = append(out, value{key: store.FigureKey{Step: step, Metric: m.Name}, title: compare.Title(st, m.Name), unit: m.Unit, better: m.Better, v: m.Value, host: host, await: await})
			}
		}
	}
	return out
}

// deviceValue is a device spec's headline figure: IOPS with p99 under the
// step's bound, or for a sequential spec its highest MB/s.
func deviceValue(st results.Step, step string, d *results.Device, sp results.DeviceSpec) value {
	v := value{key: store.FigureKey{Step: step, Metric: sp.Name + ".iops_at_max_latency"}, unit: "IOPS", better: results.HigherIsBetter,
		bound: "p99 ≤ " + results.Micros(d.MaxLatencyUs)}
	shape := fmt.Sprintf("%d B blocks, %d%% reads, %d%% random", sp.BlockSize, sp.ReadPct, sp.RandomPct)
	if sp.JudgedOn == "mbps" {
		v.key.Metric, v.unit, v.bound = sp.Name+".max_mbps", "MB/s", "no I/O errors"
	}
	v.cond = shape + ", " + v.bound
	v.title = compare.Title(st, v.key.Metric)
	switch b := sp.AtMaxLatency; {
	case b == nil:
		v.missed = true
		v.host, v.await = limits(nearestPoint(d, sp.Name))
	case sp.JudgedOn == "mbps":
		v.v, v.at = b.MBps, b.P99Us
		v.host, v.await = limits(b.LimitedBy, b.LimitedByEvidence)
	default:
		v.v, v.at = b.IOPS, b.P99Us
		v.host, v.await = limits(b.LimitedBy, b.LimitedByEvidence)
	}
	return v
}

// nearestPoint is what limited the spec's point nearest to its bound (the
// lowest p99), for a spec with no point under it.
func nearestPoint(d *results.Device, spec string) (string, *results.Evidence) {
	var best *results.DevicePoint
	for i, p := range d.Points {
		if p.Spec == spec && p.LatUs != nil && (best == nil || p.LatUs.P99 < best.LatUs.P99) {
			best = &d.Points[i]
		}
	}
	if best == nil {
		return "", nil
	}
	return best.LimitedBy, best.LimitedByEvidence
}

// stepLimit is what limited a step's headline: its body's headline point
// where it has one, else the step's window.
func stepLimit(st results.Step) (string, *results.Evidence) {
	if h, ok := st.Body.(results.HeadlineLimiter); ok {
		if by, ev, ok := h.HeadlineLimit(); ok {
			return by, ev
		}
	}
	return st.LimitedBy, st.LimitedByEvidence
}

// limits are a point's outside share of the machine when another load on
// the host limited it (verdict.Host), and its device's await, each nil
// when not so or not measured.
func limits(by string, ev *results.Evidence) (host, await *float64) {
	if ev == nil {
		return nil, nil
	}
	if by == verdict.Host {
		host = ev.CPUOutsidePct
	}
	return host, ev.DiskAwaitMs
}

// RunSamples are a run's headline figures, each with its values over the
// run's complete steps of the same kind and name (the repeats), in the
// run's order.
func RunSamples(r *results.Run) []Sample {
	var out []Sample
	at := map[store.FigureKey]int{}
	for _, v := range headlineValues(r) {
		i, ok := at[v.key]
		if !ok {
			i, at[v.key] = len(out), len(out)
			out = append(out, Sample{Key: v.key, Title: v.title, Unit: v.unit, Better: v.better, Cond: v.cond, Bound: v.bound})
		}
		if v.missed {
			out[i].RunMissed++
		} else {
			out[i].Run = append(out[i].Run, v.v)
		}
		if v.host != nil {
			out[i].RunHost = append(out[i].RunHost, *v.host)
		}
		if v.await != nil {
			out[i].RunAwait = append(out[i].RunAwait, *v.await)
		}
	}
	return out
}

// AddBase adds a baseline run's values to the samples of the same figure
// measured under the same condition; a figure measured under another is
// noted, not mixed in.
func AddBase(samples []Sample, base *results.Run) {
	own := map[int][]float64{} // this run's values of each sample
	for _, v := range headlineValues(base) {
		i := slices.IndexFunc(samples, func(s Sample) bool { return s.Key == v.key })
		if i < 0 {
			continue
		}
		s := &samples[i]
		switch {
		case v.cond != s.Cond:
			s.OtherCond = v.cond
		case v.missed:
			s.BaseMissed++
		default:
			s.Base, s.BaseAt, own[i] = append(s.Base, v.v), append(s.BaseAt, v.at), append(own[i], v.v)
		}
		if v.cond == s.Cond && v.host != nil {
			s.BaseHost = append(s.BaseHost, *v.host)
		}
		if v.cond == s.Cond && v.await != nil {
			s.BaseAwait = append(s.BaseAwait, *v.await)
		}
	}
	for i, vs := range own {
		samples[i].BaseRuns = append(samples[i].BaseRuns, results.Median(vs))
	}
}

// Judge fills b's figures and verdict from the samples, each with its
// baseline values set: the run regressed when one figure did.
func Judge(b *results.Baseline, samples []Sample) {
	b.Alpha = compare.Alpha
	b.Figures = nil
	for _, s := range samples {
		if len(s.Base)+s.BaseMissed == 0 && s.OtherCond == "" {
			continue
		}
		b.Figures = append(b.Figures, judgeFigure(s, b.MaxRegressionPct))
	}
	holm(b.Figures)
	var regressed, hostBusy []string
	judged := 0
	for i := range b.Figures {
		f := &b.Figures[i]
		if f.PHolm == nil {
			continue
		}
		judged++
		settle(f, b.MaxRegressionPct)
		if f.Regressed {
			if why, ok := hostLimited(f, samples); ok {
				f.Regressed, f.HostLimited = false, true
				f.Verdict = "no verdict (" + why + ")"
				hostBusy = append(hostBusy, f.Title+": "+why)
				continue
			}
			regressed = append(regressed, reason(f, samples))
		}
	}
	switch {
	case len(b.Figures) == 0:
		b.Verdict, b.Reason = results.BaselineNone, "the run and its baseline share no headline figure (the same step, kind and name, and metric)"
	case len(regressed) > 0:
		b.Verdict, b.Regressed = results.BaselineRegressed, true
		b.Reason = fmt.Sprintf("%s: significantly (p < %g, Holm-adjusted over %s) and beyond the change allowed", strings.Join(regressed, "; "), compare.Alpha, results.Plural(judged, "figure"))
	case len(hostBusy) > 0:
		b.Verdict = results.BaselineHostBusy
		b.Reason = strings.Join(hostBusy, "; ") + ": so the storage was not judged; rerun with the host otherwise idle, or judge a bound the host's load cannot reach (e.g. max_latency: 5ms)"
	case judged == 0:
		b.Verdict, b.Reason = results.BaselineNone, tooFew(b.Figures[0])
	default:
		b.Verdict, b.Reason = results.BaselinePass, ""
	}
}

// MaxHostAwaitRatio is how much the device's own await may rise for a
// change to be set aside as the host's: a busy host delays the program
// that waits for an I/O, not the device that serves it (on this project's
// VM a busy loop on each core moved qd 1 p99 from 75 to 165 µs and the
// await from 0.041 to 0.053 ms; the lab's hdd tier moved the await to 9 ms).
const MaxHostAwaitRatio = 1.5

// hostLimited says why a figure that would regress is not judged: another
// load on the host limited most of the run's repeats and at most half the
// baseline's, and the device's own await shows the storage answered as
// fast as before, so the change is the host's, not the storage's. Without
// that evidence (no await measured on a side) the figure is judged: a
// false alarm rather than a regression missed.
func hostLimited(f *results.BaselineFigure, samples []Sample) (string, bool) {
	i := slices.IndexFunc(samples, func(s Sample) bool { return s.Key.Step == f.Step && s.Key.Metric == f.Metric })
	if i < 0 {
		return "", false
	}
	s := samples[i]
	if 2*len(s.RunHost) <= f.RunN || 2*len(s.BaseHost) > f.BaseN || len(s.RunAwait) == 0 || len(s.BaseAwait) == 0 {
		return "", false
	}
	runAwait, baseAwait := results.Median(s.RunAwait), results.Median(s.BaseAwait)
	if runAwait > MaxHostAwaitRatio*baseAwait {
		return "", false
	}
	base := "none of the baseline's"
	if len(s.BaseHost) > 0 {
		base = fmt.Sprintf("%d of the baseline's %d, at most %.0f%%", len(s.BaseHost), f.BaseN, slices.Max(s.BaseHost))
	}
	return fmt.Sprintf("another load on the host limited %d of the run's %d repeats, not its storage: processes outside calibra used %s of the machine (%s), and the device's own await stayed at %.3g ms against the baseline's %.3g ms",
		len(s.RunHost), f.RunN, pctRange(s.RunHost), base, runAwait, baseAwait), true
}

// pctRange is a set of shares in words: "85%" or "85-91%".
func pctRange(v []float64) string {
	lo, hi := math.Round(slices.Min(v)), math.Round(slices.Max(v))
	if lo == hi {
		return fmt.Sprintf("%.0f%%", lo)
	}
	return fmt.Sprintf("%.0f-%.0f%%", lo, hi)
}

// worst is the rank of a repeat that missed the bound: below every value
// that met it, in the figure's bad direction.
func worst(better string) float64 {
	if better == results.HigherIsBetter {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// ranked are the values with the repeats that missed as the worst.
func ranked(vals []float64, missed int, better string) []float64 {
	out := slices.Clone(vals)
	for range missed {
		out = append(out, worst(better))
	}
	return out
}

// judgeFigure judges one figure as far as it can alone: its test's
// p-value, or why there is none. settle decides once every p is adjusted.
func judgeFigure(s Sample, maxPct float64) results.BaselineFigure {
	f := results.BaselineFigure{Step: s.Key.Step, Metric: s.Key.Metric, Title: s.Title, Unit: s.Unit, Better: s.Better, Bound: s.Bound,
		RunN: len(s.Run) + s.RunMissed, BaseN: len(s.Base) + s.BaseMissed, RunMissed: s.RunMissed, BaseMissed: s.BaseMissed, AllowedPct: maxPct}
	if len(s.Run) > 0 {
		f.RunMedian = results.Median(s.Run)
	}
	if len(s.Base) > 0 {
		f.BaseMedian = results.Median(s.Base)
	}
	if sd, ok := logSpread(s.BaseRuns); ok {
		sp := (math.Exp(sd) - 1) * 100
		f.SpreadPct = &sp
		f.AllowedPct = max(maxPct, allowedBy(sd*predictionFactor(len(s.BaseRuns)), s.Better))
	}
	run, base := ranked(s.Run, s.RunMissed, s.Better), ranked(s.Base, s.BaseMissed, s.Better)
	if m := results.Median(run); !math.IsInf(m, 0) && f.BaseMedian != 0 && len(s.Base) > 0 {
		pct := (m/f.BaseMedian - 1) * 100
		f.DeltaPct = &pct
	}
	switch {
	case len(s.Base) == 0 && s.OtherCond != "":
		f.Verdict = fmt.Sprintf("no verdict (the baseline measured it with %s, the run with %s: judge against runs of the same settings)", s.OtherCond, s.Cond)
	case len(s.Base) == 0:
		f.Verdict = fmt.Sprintf("no verdict (no baseline value met %s either)", s.Bound)
	case f.BaseN < MinN || f.RunN < MinN:
		f.Verdict = fmt.Sprintf("no verdict (n=%d against %d; %d a side needed)", f.RunN, f.BaseN, MinN)
	case compare.MinP(f.RunN, f.BaseN) >= compare.Alpha:
		f.Verdict = fmt.Sprintf("no verdict (n=%d against %d: the U test cannot reach p < %g)", f.RunN, f.BaseN, compare.Alpha)
	case f.BaseMedian == 0:
		f.Verdict = "no verdict (the baseline's median is zero)"
	default:
		p := compare.UTest(base, run)
		f.P = &p
	}
	return f
}

// settle gives a tested figure its verdict from its adjusted p-value and
// change: a median that missed the bound is beyond any allowance.
func settle(f *results.BaselineFigure, maxPct float64) {
	missedMost := f.DeltaPct == nil
	pct := 0.0
	if !missedMost {
		pct = *f.DeltaPct
	}
	worse := missedMost || pct != 0 && (pct > 0) != (f.Better == results.HigherIsBetter)
	significant := *f.PHolm < compare.Alpha
	switch {
	case !significant && worse:
		f.Verdict = "worse within noise"
	case !significant:
		f.Verdict = "~"
	case !worse:
		f.Verdict = "better"
	case !missedMost && math.Abs(pct) <= f.AllowedPct:
		f.Verdict = "worse within the allowance"
		if f.AllowedPct > maxPct {
			f.Verdict = "worse within the baseline runs' spread"
		}
	default:
		f.Verdict, f.Regressed = results.BaselineRegressed, true
	}
}

// holm adjusts the tested figures' p-values for being tested together
// (Holm-Bonferroni): the chance that any of them is a false alarm stays
// at Alpha.
func holm(figs []results.BaselineFigure) {
	var tested []int
	for i, f := range figs {
		if f.P != nil {
			tested = append(tested, i)
		}
	}
	sort.SliceStable(tested, func(a, b int) bool { return *figs[tested[a]].P < *figs[tested[b]].P })
	running := 0.0
	for k, i := range tested {
		adj := min(1, float64(len(tested)-k)**figs[i].P)
		running = max(running, adj)
		p := running
		figs[i].PHolm = &p
	}
}

// logSpread is the baseline runs' run-to-run spread: the sample standard
// deviation of their medians' logarithms. On the log scale a spread is a
// ratio, so the bound built from it never allows a figure to fall past
// zero: on a straight scale 20% of spread among three runs allowed a fall
// of more than 100%, and no fall could regress.
func logSpread(medians []float64) (float64, bool) {
	n := len(medians)
	if n < 2 {
		return 0, false
	}
	logs := make([]float64, n)
	mean := 0.0
	for i, m := range medians {
		if m <= 0 {
			return 0, false
		}
		logs[i] = math.Log(m)
		mean += logs[i] / float64(n)
	}
	ss := 0.0
	for _, l := range logs {
		ss += (l - mean) * (l - mean)
	}
	return math.Sqrt(ss / float64(n-1)), true
}

// allowedBy is the change in percent, in the figure's bad direction, that
// a log-scale bound k allows: a fall of 1-e^-k for a figure where higher
// is better, a rise of e^k-1 otherwise.
func allowedBy(k float64, better string) float64 {
	if better == results.HigherIsBetter {
		return (1 - math.Exp(-k)) * 100
	}
	return (math.Exp(k) - 1) * 100
}

// tQuantile is Student's t at 97.5% by degrees of freedom (1 to 30); more
// take the normal's 1.96.
var tQuantile = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
	2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// predictionFactor turns the spread of n runs into the 97.5% prediction
// bound of one more run from the same storage: t(n-1)·√(1+1/n).
func predictionFactor(n int) float64 {
	t := 1.96
	if n-1 <= len(tQuantile) {
		t = tQuantile[n-2]
	}
	return t * math.Sqrt(1+1/float64(n))
}

// reason is a regressed figure in words, for the run's verdict.
func reason(f *results.BaselineFigure, samples []Sample) string {
	i := slices.IndexFunc(samples, func(s Sample) bool { return s.Key.Step == f.Step && s.Key.Metric == f.Metric })
	base := fmt.Sprintf("the baseline's median was %s", withUnit(f.BaseMedian, f.Unit))
	if i >= 0 && len(samples[i].BaseAt) > 0 && samples[i].Bound != "" && f.RunMissed > 0 {
		base += " at " + results.Micros(math.Round(results.Median(samples[i].BaseAt))) + " p99"
	}
	p := fmt.Sprintf("p=%.3f", *f.PHolm)
	switch {
	case f.RunMissed == f.RunN:
		return fmt.Sprintf("%s: no point met %s in any of the run's %s; %s (%s)", f.Title, f.Bound, results.Plural(f.RunN, "repeat"), base, p)
	case f.DeltaPct == nil:
		return fmt.Sprintf("%s: no point met %s in %d of the run's %d repeats; %s (%s)", f.Title, f.Bound, f.RunMissed, f.RunN, base, p)
	}
	allowed := fmt.Sprintf("%s%% allowed", results.Num(f.AllowedPct))
	if f.SpreadPct != nil {
		allowed += fmt.Sprintf(", the baseline runs' spread %s%%", results.Num(*f.SpreadPct))
	}
	return fmt.Sprintf("%s %s %.1f%% to %s; %s (%s; %s)", f.Title, moved(f), math.Abs(*f.DeltaPct), withUnit(f.RunMedian, f.Unit), base, p, allowed)
}

func withUnit(v float64, unit string) string { return strings.TrimSpace(results.Num(v) + " " + unit) }

// moved says which way a figure moved: "fell" or "rose".
func moved(f *results.BaselineFigure) string {
	if f.DeltaPct != nil && *f.DeltaPct < 0 {
		return "fell"
	}
	return "rose"
}

// tooFew says, in a sentence, why no figure could be judged.
func tooFew(f results.BaselineFigure) string {
	switch {
	case strings.HasPrefix(f.Verdict, "no verdict (the baseline measured"), strings.HasPrefix(f.Verdict, "no verdict (no baseline value"):
		return strings.TrimSuffix(strings.TrimPrefix(f.Verdict, "no verdict ("), ")")
	case f.RunN < MinN || f.BaseN < MinN:
		return fmt.Sprintf("the run has %s of each figure and its baseline %d: a verdict needs %d a side (repeat the study's steps, e.g. --set KIND.repeat=3, or take more stored runs with --baseline-runs)", results.Plural(f.RunN, "value"), f.BaseN, MinN)
	}
	return fmt.Sprintf("with %d values against %d the U test's smallest p-value is %.2f, so no change can be significant at %g: repeat more (4 a side, or 3 against 5 or more)",
		f.RunN, f.BaseN, compare.MinP(f.RunN, f.BaseN), compare.Alpha)
}
