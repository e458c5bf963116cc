package regress

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
	"github.com/calibra-bench/calibra/internal/verdict"
)

func sample(better string, base, run []float64) Sample {
	return Sample{Key: store.FigureKey{Step: "oltp/oltp", Metric: "nopm"}, Title: "NOPM", Better: better, Base: base, Run: run}
}

// The verdict of one figure: no verdict below 3 a side or where the test
// cannot reach significance; a clear fall of a higher-is-better figure (a
// clear rise of a lower-is-better one) regresses; noise, a change within
// the allowance and an improvement pass.
func TestJudgeFigure(t *testing.T) {
	higher, lower := results.HigherIsBetter, results.LowerIsBetter
	six := []float64{1000, 1010, 990, 1005, 995, 1002}
	for _, tc := range []struct {
		name      string
		s         Sample
		maxPct    float64
		verdict   string
		regressed bool
		tested    bool
	}{
		{"n=2 on the run's side", sample(higher, six, []float64{500, 510}), 5, "no verdict (n=2 against 6; 3 a side needed)", false, false},
		{"n=2 on the baseline's side", sample(higher, []float64{1000, 1010}, []float64{500, 510, 505}), 5, "no verdict (n=3 against 2; 3 a side needed)", false, false},
		{"3 against 3: the test cannot decide", sample(higher, []float64{1000, 1010, 990}, []float64{500, 510, 505}), 5,
			"no verdict (n=3 against 3: the U test cannot reach p < 0.05)", false, false},
		{"throughput clearly down", sample(higher, six, []float64{500, 510, 505}), 5, "regressed", true, true},
		{"throughput clearly up", sample(higher, six, []float64{1500, 1510, 1505}), 5, "better", false, true},
		{"latency clearly up", sample(lower, six, []float64{1500, 1510, 1505}), 5, "regressed", true, true},
		{"latency clearly down", sample(lower, six, []float64{500, 510, 505}), 5, "better", false, true},
		{"down 3%, within a 5% allowance", sample(higher, six, []float64{970, 972, 971}), 5, "worse within the allowance", false, true},
		{"down 3%, beyond a 2% allowance", sample(higher, six, []float64{970, 972, 971}), 2, "regressed", true, true},
		{"within noise", sample(higher, six, []float64{1003, 992, 1008}), 5, "~", false, true},
		{"worse but within noise", sample(higher, []float64{1000, 1300, 700, 1200, 800, 1100}, []float64{900, 1250, 650}), 0, "worse within noise", false, true},
		{"a zero baseline", sample(higher, []float64{0, 0, 0, 0, 0}, []float64{1, 2, 3}), 5, "no verdict (the baseline's median is zero)", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &results.Baseline{MaxRegressionPct: tc.maxPct}
			Judge(b, []Sample{tc.s})
			f := b.Figures[0]
			if f.Verdict != tc.verdict || f.Regressed != tc.regressed || (f.P != nil) != tc.tested {
				t.Errorf("verdict %q regressed %t tested %t (p %v), want %q %t %t", f.Verdict, f.Regressed, f.P != nil, f.P, tc.verdict, tc.regressed, tc.tested)
			}
			if f.BaseN != len(tc.s.Base) || f.RunN != len(tc.s.Run) || f.BaseMedian != results.Median(tc.s.Base) || f.RunMedian != results.Median(tc.s.Run) {
				t.Errorf("n %d/%d medians %v/%v", f.RunN, f.BaseN, f.RunMedian, f.BaseMedian)
			}
		})
	}
}

// The run's verdict: regressed when one figure is; no verdict, with the
// reason in a sentence, when none could be judged or nothing is shared.
func TestJudge(t *testing.T) {
	six := []float64{1000, 1010, 990, 1005, 995, 1002}
	fell := sample(results.HigherIsBetter, six, []float64{500, 510, 505})
	steady := sample(results.HigherIsBetter, six, []float64{1003, 992, 1008})
	steady.Key.Metric, steady.Title = "tpm_db", "TPM"
	unshared := sample(results.HigherIsBetter, nil, []float64{1, 2, 3})
	for _, tc := range []struct {
		name      string
		samples   []Sample
		verdict   string
		reason    string
		regressed bool
	}{
		{"one figure fell", []Sample{steady, fell}, results.BaselineRegressed, "NOPM fell 49.6% to 505; the baseline's median was 1,001 (p=0.048; 5% allowed)", true},
		{"every figure steady", []Sample{steady, unshared}, results.BaselinePass, "", false},
		{"nothing shared", []Sample{unshared}, results.BaselineNone, "share no headline figure", false},
		{"too few repeats", []Sample{sample(results.HigherIsBetter, six, []float64{500})}, results.BaselineNone,
			"the run has 1 value of each figure and its baseline 6: a verdict needs 3 a side", false},
		{"3 against 3", []Sample{sample(results.HigherIsBetter, six[:3], []float64{500, 501, 502})}, results.BaselineNone,
			"with 3 values against 3 the U test's smallest p-value is 0.10, so no change can be significant at 0.05", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &results.Baseline{MaxRegressionPct: 5}
			Judge(b, tc.samples)
			if b.Verdict != tc.verdict || b.Regressed != tc.regressed || !strings.Contains(b.Reason, tc.reason) || (tc.reason == "") != (b.Reason == "") {
				t.Errorf("verdict %q regressed %t reason %q, want %q %t %q", b.Verdict, b.Regressed, b.Reason, tc.verdict, tc.regressed, tc.reason)
			}
		})
	}
}

// The run's side: its headline figures only, each step's repeats pooled,
// incomplete steps left out.
func TestRunSamples(t *testing.T) {
	dev := func(iops float64, status string) results.Step {
		return results.Step{StepHeader: results.StepHeader{Kind: "device", Name: "device", Status: status},
			Body: &results.Device{MaxLatencyUs: 1000, Specs: []results.DeviceSpec{{Name: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100,
				AtMaxLatency: &results.DeviceBest{IOPS: iops}}}}}
	}
	r := &results.Run{Steps: []results.Step{dev(100, results.StatusComplete), dev(110, results.StatusComplete), dev(5, results.StatusFailed), dev(120, results.StatusComplete)}}
	got := RunSamples(r)
	if len(got) != 1 || got[0].Key != (store.FigureKey{Step: "device/device", Metric: "4k-randread.iops_at_max_latency"}) ||
		len(got[0].Run) != 3 || got[0].Better != results.HigherIsBetter || !strings.Contains(got[0].Title, "4k random read IOPS") {
		t.Fatalf("%+v", got)
	}
}

// dev is a device run of the spec 4k-randread under bound (µs), one
// repeat a value; a value below 0 is a repeat with no point under the
// bound.
func dev(bound float64, iops ...float64) *results.Run {
	r := &results.Run{}
	for _, v := range iops {
		sp := results.DeviceSpec{Name: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, JudgedOn: "p99_bound"}
		if v >= 0 {
			sp.AtMaxLatency = &results.DeviceBest{IOPS: v, P99Us: 77}
		}
		r.Steps = append(r.Steps, results.Step{StepHeader: results.StepHeader{Kind: "device", Name: "device", Status: results.StatusComplete},
			Body: &results.Device{MaxLatencyUs: bound, Specs: []results.DeviceSpec{sp}}})
	}
	return r
}

// judged is run judged against the baseline runs base at a 5% allowance.
func judged(run *results.Run, base []*results.Run) *results.Baseline {
	samples := RunSamples(run)
	for _, b := range base {
		AddBase(samples, b)
	}
	b := &results.Baseline{MaxRegressionPct: 5}
	Judge(b, samples)
	return b
}

// A figure never vanishes from the verdict: a run on slower storage that
// met the bound in no repeat is judged worse than every baseline value,
// with the reason; a bound the baseline measured differently is no
// verdict that says so, never a comparison of unlike figures.
func TestJudgeMissedBound(t *testing.T) {
	fast := []*results.Run{dev(1000, 17900, 17800, 18000), dev(1000, 17950, 17850, 17900), dev(1000, 17920, 17880, 17910)}
	for _, tc := range []struct {
		name      string
		run       *results.Run
		base      []*results.Run
		verdict   string
		reason    string
		regressed bool
	}{
		{"no repeat met the bound", dev(1000, -1, -1, -1), fast, results.BaselineRegressed,
			"no point met p99 ≤ 1 ms in any of the run's 3 repeats; the baseline's median was 17,900 IOPS at 77 µs p99 (p=0.009)", true},
		{"four of five missed", dev(1000, 17900, -1, -1, -1, -1), fast, results.BaselineRegressed, "no point met p99 ≤ 1 ms in 4 of the run's 5 repeats", true},
		{"two of three missed: not significant", dev(1000, 17900, -1, -1), fast, results.BaselinePass, "", false},
		{"one of three missed: within noise", dev(1000, 17900, 17950, -1), fast, results.BaselinePass, "", false},
		{"another bound", dev(50000, 114, 115, 113), fast, results.BaselineNone,
			"the baseline measured it with 4096 B blocks, 100% reads, 100% random, p99 ≤ 1 ms, the run with 4096 B blocks, 100% reads, 100% random, p99 ≤ 50 ms", false},
		{"the baseline missed too", dev(1000, -1, -1, -1), []*results.Run{dev(1000, -1, -1, -1)}, results.BaselineNone, "no baseline value met p99 ≤ 1 ms either", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := judged(tc.run, tc.base)
			if b.Verdict != tc.verdict || b.Regressed != tc.regressed || !strings.Contains(b.Reason, tc.reason) || (tc.reason == "") != (b.Reason == "") {
				t.Errorf("verdict %q regressed %t reason %q, want %q %t %q", b.Verdict, b.Regressed, b.Reason, tc.verdict, tc.regressed, tc.reason)
			}
		})
	}
}

// Noise is the baseline runs' own: a change that is significant against
// the pooled repeats but within what the runs' spread lets one more good
// run do passes; the same change against steady runs regresses.
//
// However wide the spread, a fall to a few per cent of the baseline is a
// regression: the spread is a ratio (log scale), where a straight one let
// three runs 20% apart allow any fall, and hid the hdd tier's -99.5%.
func TestJudgeBaselineSpread(t *testing.T) {
	near := dev(1000, 840, 845, 850)
	for _, tc := range []struct {
		name    string
		run     *results.Run
		base    []*results.Run
		verdict string
	}{
		{"runs 15% apart", near, []*results.Run{dev(1000, 1000, 1005, 995), dev(1000, 870, 875, 865), dev(1000, 1150, 1155, 1145)}, "worse within the baseline runs' spread"},
		{"steady runs", near, []*results.Run{dev(1000, 1000, 1005, 995), dev(1000, 1002, 1007, 997), dev(1000, 998, 1003, 993)}, results.BaselineRegressed},
		{"a fall of 99% against runs 25% apart", dev(1000, 90, 95, 100), []*results.Run{dev(1000, 17900, 17950, 17850), dev(1000, 12500, 12550, 12450), dev(1000, 21000, 21050, 20950)}, results.BaselineRegressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := judged(tc.run, tc.base)
			f := b.Figures[0]
			if f.Verdict != tc.verdict || f.SpreadPct == nil || f.PHolm == nil || *f.PHolm >= 0.05 {
				t.Errorf("verdict %q (spread %v, allowed %.1f%%, p %v), want %q", f.Verdict, f.SpreadPct, f.AllowedPct, f.PHolm, tc.verdict)
			}
		})
	}
}

// Several figures tested at once: each p-value is adjusted (Holm), so
// three falls each significant alone at p = 0.024 are not, together, a
// regression; one such fall among steady figures is.
func TestJudgeHolm(t *testing.T) {
	six := []float64{1000, 1010, 990, 1005, 995, 1002}
	fell := func(metric string) Sample {
		s := sample(results.HigherIsBetter, six, []float64{500, 510, 505})
		s.Key.Metric, s.Title = metric, metric
		return s
	}
	b := &results.Baseline{MaxRegressionPct: 5}
	Judge(b, []Sample{fell("a"), fell("b"), fell("c")})
	if b.Regressed || b.Verdict != results.BaselinePass || *b.Figures[0].P >= 0.05 || *b.Figures[0].PHolm < 0.05 {
		t.Errorf("three figures at p=%.3f: verdict %q, adjusted p %.3f", *b.Figures[0].P, b.Verdict, *b.Figures[0].PHolm)
	}
}

// limitedDev is dev whose every repeat's point (the nearest to the bound,
// for a repeat that missed it) was limited by what limit names, with
// processes outside calibra at outside percent of the machine and the
// device's await at await ms (not measured when 0).
func limitedDev(limit string, outside, await float64, iops ...float64) *results.Run {
	r := dev(1000, iops...)
	for i := range r.Steps {
		d := r.Steps[i].Body.(*results.Device)
		ev := &results.Evidence{CPUOutsidePct: &outside}
		if await > 0 {
			ev.DiskAwaitMs = &await
		}
		if b := d.Specs[0].AtMaxLatency; b != nil {
			b.LimitedBy, b.LimitedByEvidence = limit, ev
		}
		// Two points; the one nearer the bound decides.
		d.Points = []results.DevicePoint{
			{Spec: "4k-randread", QD: 4, LatUs: &results.DeviceLatency{P99: 9000}, LimitedBy: verdict.Storage, LimitedByEvidence: ev},
			{Spec: "4k-randread", QD: 1, LatUs: &results.DeviceLatency{P99: 1400}, LimitedBy: limit, LimitedByEvidence: ev},
		}
	}
	return r
}

// A busy host is not slow storage: a run whose repeats another load on
// the host limited (verdict "host"), while the device's own await stayed
// as the baseline's, is not judged where it would have regressed, and
// says why. Slower storage regresses however busy the host: limited by
// storage, or limited by host with the device's await up (the lab's hdd
// tier beside three busy loops: 94% outside, await 9 ms), or with no
// await to tell; a baseline as host-limited as the run is judged like with
// like.
func TestJudgeHostBusy(t *testing.T) {
	good := []*results.Run{limitedDev(verdict.Storage, 3, 0.041, 17900, 17800, 18000), limitedDev(verdict.Storage, 2, 0.042, 17950, 17850, 17900),
		limitedDev(verdict.Storage, 4, 0.041, 17920, 17880, 17910)}
	busyBase := []*results.Run{limitedDev(verdict.Host, 80, 0.05, 9000, 9100, 8900), limitedDev(verdict.Host, 85, 0.05, 9050, 9150, 8950)}
	for _, tc := range []struct {
		name    string
		run     *results.Run
		base    []*results.Run
		verdict string
		reason  string
	}{
		{"missed the bound on a busy host", limitedDev(verdict.Host, 88, 0.053, -1, -1, -1), good, results.BaselineHostBusy,
			"another load on the host limited 3 of the run's 3 repeats, not its storage: processes outside calibra used 88% of the machine (none of the baseline's), and the device's own await stayed at 0.053 ms against the baseline's 0.041 ms"},
		{"fell on a busy host", limitedDev(verdict.Host, 91, 0.045, 7100, 8000, 7500), good, results.BaselineHostBusy, "rerun with the host otherwise idle"},
		{"missed the bound on slow storage beside the same load", limitedDev(verdict.Storage, 88, 9, -1, -1, -1), good, results.BaselineRegressed,
			"no point met p99 ≤ 1 ms in any of the run's 3 repeats"},
		{"slow storage that the host's load limited", limitedDev(verdict.Host, 94, 9.1, -1, -1, -1), good, results.BaselineRegressed,
			"no point met p99 ≤ 1 ms in any of the run's 3 repeats"},
		{"a busy host and no await to tell", limitedDev(verdict.Host, 88, 0, -1, -1, -1), good, results.BaselineRegressed, "no point met"},
		{"a busy baseline too: like with like", limitedDev(verdict.Host, 88, 0.05, 100, 110, 120), busyBase, results.BaselineRegressed, "fell"},
		{"met the bound on a busy host", limitedDev(verdict.Host, 88, 0.05, 17900, 17850, 17950), good, results.BaselinePass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := judged(tc.run, tc.base)
			if b.Verdict != tc.verdict || b.Regressed != (tc.verdict == results.BaselineRegressed) || !strings.Contains(b.Reason, tc.reason) || (tc.reason == "") != (b.Reason == "") {
				t.Errorf("verdict %q regressed %t reason %q, want %q %q", b.Verdict, b.Regressed, b.Reason, tc.verdict, tc.reason)
			}
			if host := tc.verdict == results.BaselineHostBusy; b.Figures[0].HostLimited != host || host && !strings.HasPrefix(b.Figures[0].Verdict, "no verdict (another load") {
				t.Errorf("figure %q host_limited %t", b.Figures[0].Verdict, b.Figures[0].HostLimited)
			}
		})
	}
}
