package report

import (
	"math"
	"strconv"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

// deviceAtBounds draws, per spec, latency against IOPS over its sweep of
// outstanding I/O (mean, p99 and p99.99, each point labelled by the
// outstanding I/O in the table), and tables each spec's IOPS at p99 within
// each of the sweep's bounds.
func (b *builder) deviceAtBounds(d *results.Device, specs []string, bySpec map[string][]results.DevicePoint) {
	var refs []ChartRef
	for _, s := range specs {
		refs = append(refs, b.chart(s+": latency against IOPS", latencyCurve(bySpec[s], d.P99BoundsUs)))
	}
	if len(refs) > 0 {
		b.charts("Latency against IOPS, over the outstanding I/O (workers x qd)", refs...)
	}
	if len(d.P99BoundsUs) == 0 {
		return
	}
	t := Table{Caption: "IOPS at p99 within each bound, over the outstanding I/O (no errors)",
		Head: []string{"spec", "p99 ≤", "IOPS", "qd", "outstanding I/O", "p99 µs", "limited by"}, Headline: true}
	for _, s := range d.Specs {
		for _, a := range s.IOPSAtP99 {
			bound := results.Micros(a.BoundUs)
			if a.Point == nil {
				t.Rows = append(t.Rows, append(cells(s.Name, bound), Cell{Text: "none: " + a.Missing, Class: "bad"}, Cell{}, Cell{}, Cell{}, Cell{}))
				continue
			}
			row := cells(s.Name, bound, results.Num(a.Point.IOPS), strconv.Itoa(a.Point.QD), strconv.Itoa(a.OutstandingIOs), results.Num(a.Point.P99Us), a.Point.LimitedBy)
			row[6].Class = "t"
			t.Rows = append(t.Rows, row)
		}
	}
	b.table(t)
}

// latencyCurve is one spec's points as latency (µs) against IOPS, on a log
// latency axis when the tail is ten times the mean, with the bounds marked.
func latencyCurve(points []results.DevicePoint, bounds []float64) assets.Chart {
	var x, mean, p99, p9999 []float64
	hi, lo := 0.0, math.Inf(1)
	for _, p := range points {
		if p.LatUs == nil {
			continue
		}
		x = append(x, p.IOPS)
		mean = append(mean, p.LatUs.Mean)
		p99 = append(p99, p.LatUs.P99)
		v := nan
		if p.LatUs.P9999 != nil {
			v = *p.LatUs.P9999
			hi = max(hi, v)
		}
		p9999 = append(p9999, v)
		if p.LatUs.Mean > 0 {
			lo = min(lo, p.LatUs.Mean)
		}
	}
	c := assets.Chart{XName: "IOPS", YName: "latency µs", X: assets.Nums(x), YLog: hi >= 10*lo,
		Series: []assets.Series{{Name: "mean", Y: assets.Nums(mean)}, {Name: "p99", Y: assets.Nums(p99)},
			{Name: "p99.99", Y: assets.Nums(p9999), Dashed: true}}}
	for _, bound := range bounds {
		c.MarkY = append(c.MarkY, assets.Mark{Label: "p99 ≤ " + results.Micros(bound), Value: bound})
	}
	return c
}

// deviceBursts tables the points whose rate fell during a run.
func (b *builder) deviceBursts(d *results.Device) {
	t := Table{Caption: "Bursts: points whose rate fell during a run and stayed down (per-second IOPS, raw/*_iops.*.log)",
		Head: []string{"spec", "qd", "run", "fell at s", "burst IOPS", "settled IOPS", "drop %", "written before", "limited by"}, Headline: true}
	host := false
	for _, p := range d.Points {
		bu, limited := p.Burst, p.LimitedBy
		if bu == nil && p.HostLimitedFall != nil {
			// Listed so that a fall is never silent, and said not to be a burst.
			bu, limited = p.HostLimitedFall, "host: other loads took the CPU, not a burst"
		}
		if bu != nil {
			row := cells(p.Spec, strconv.Itoa(p.QD), bu.Raw, strconv.Itoa(bu.FellAtS), results.Num(bu.PeakIOPS), results.Num(bu.SettledIOPS), results.Num(bu.DropPct), bytesText(bu.WrittenBytesBeforeFall), limited)
			row[2].Class, row[8].Class = "t", "t"
			t.Rows = append(t.Rows, row)
			host = host || p.Burst != nil && p.LimitedBy == "host"
		}
	}
	if len(t.Rows) > 0 {
		b.table(t)
	}
	if host {
		b.sec.Notes = append(b.sec.Notes, "A burst in a point limited by the host may be another load's doing, not the storage's: repeat it on a quiet host.")
	}
}
