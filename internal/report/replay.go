package report

import (
	"fmt"
	"math"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

// replay sets the profile beside the replay, each rate at 1x and at the
// headroom, then each multiple's latencies against the SLA, and the
// verdict.
func (b *builder) replay(r *results.Replay) {
	head := "n/a"
	if r.HeadroomX != nil {
		head = results.Num(*r.HeadroomX)
	}
	b.card("headroom", head, "× the profile", fmt.Sprintf("read p99 ≤ %s ms, commit p99 ≤ %s ms", results.Num(r.SLA.ReadP99Ms), results.Num(r.SLA.CommitP99Ms)), r.LimitedBy)
	if r.Verdict != "" {
		b.sec.Notes = append(b.sec.Notes, "Verdict: "+r.Verdict+".")
	}
	rates := Table{Caption: fmt.Sprintf("The profile (%s %s, %s s from %s) against the replay (ratio 1x: the replay's fidelity)",
		r.Profile.Engine, r.Profile.ServerVersion, results.Num(r.Profile.DurationS), r.Profile.CapturedAt), Headline: true,
		Head: []string{"rate", "profile", "replay at 1x", "ratio 1x", "at the headroom", "headroom ×"}}
	for _, rr := range r.Rates {
		rates.Rows = append(rates.Rows, cells(rr.Name, results.Num(rr.Profile), results.NumPtr(rr.At1x), results.NumPtr(rr.Ratio1x), results.NumPtr(rr.AtHeadroom), results.NumPtr(rr.HeadroomX)))
	}
	for _, rr := range r.Shape {
		rates.Rows = append(rates.Rows, cells(rr.Name, results.Num(rr.Profile), results.NumPtr(rr.At1x), results.NumPtr(rr.Ratio1x), "", ""))
	}
	b.table(rates)
	var x, rp50, rp99, cp50, cp99 []float64
	steps := Table{Caption: fmt.Sprintf("Multiples of the profile (%s s window after %s s warm-up each)", results.Num(r.WindowS), results.Num(r.WarmupS)), Headline: true,
		Head: []string{"×", "page reads/s asked", "page reads/s", "commits/s asked", "commits/s", "read p50 ms", "read p99 ms", "commit p50 ms", "commit p99 ms",
			"CPU busy %", "disk util %", "calibra CPU %", "within SLA", "broke", "limited by"}}
	lat := func(l *results.ReplayLatency) (float64, float64) {
		if l == nil {
			return nan, nan
		}
		return l.P50, l.P99
	}
	for _, s := range r.Steps {
		r50, r99 := lat(s.ReadLatMs)
		c50, c99 := lat(s.CommitLatMs)
		x, rp50, rp99, cp50, cp99 = append(x, s.Multiple), append(rp50, r50), append(rp99, r99), append(cp50, c50), append(cp99, c99)
		steps.Rows = append(steps.Rows, append(cells(results.Num(s.Multiple), results.Num(s.AskedPageReadsPS), results.Num(s.PageReadsPS), results.Num(s.AskedCommitsPS), results.Num(s.CommitsPS),
			latText(r50), latText(r99), latText(c50), latText(c99), results.NumPtr(s.CPUBusyPct), results.NumPtr(s.DiskUtilPct), results.Num(s.DriverCPUPct)),
			verdictCell(s.WithinSLA, "yes", "no"), Cell{Text: s.Broke, Class: "t"}, Cell{Text: s.LimitedBy, Class: "t"}))
	}
	if len(x) > 0 {
		b.charts("Against multiples of the profile", b.chart("Read and commit latency (SLA p99)", assets.Chart{XName: "× the profile", YName: "ms", XLog: true, X: assets.Nums(x),
			Series: []assets.Series{{Name: "read p99 ms", Y: assets.Nums(rp99)}, {Name: "read p50 ms", Y: assets.Nums(rp50), Dashed: true},
				{Name: "commit p99 ms", Y: assets.Nums(cp99)}, {Name: "commit p50 ms", Y: assets.Nums(cp50), Dashed: true}},
			MarkY: []assets.Mark{{Label: "read SLA " + results.Num(r.SLA.ReadP99Ms) + " ms", Value: r.SLA.ReadP99Ms},
				{Label: "commit SLA " + results.Num(r.SLA.CommitP99Ms) + " ms", Value: r.SLA.CommitP99Ms}}}))
	}
	b.table(steps)
	b.sec.Notes = append(b.sec.Notes, "Page reads: "+r.ReadMethod+".", "Commits: "+r.CommitMethod+".")
	for _, c := range r.CannotCapture {
		b.sec.Notes = append(b.sec.Notes, "A profile cannot capture "+c)
	}
	b.missing(r.Missing)
	b.sec.Notes = append(b.sec.Notes, r.Warnings...)
}

// latText is a latency, or n/a where the step had none of the kind.
func latText(ms float64) string {
	if math.IsNaN(ms) {
		return "n/a"
	}
	return results.Num(ms)
}
