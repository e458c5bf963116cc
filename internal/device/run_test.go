package device

import (
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

func TestSpecResults(t *testing.T) {
	pt := func(spec string, qd int, iops, p99 float64, errors int64) results.DevicePoint {
		return results.DevicePoint{Spec: spec, QD: qd, IOPS: iops, MBps: iops / 100, Errors: errors,
			LatUs: &results.DeviceLatency{P99: p99}}
	}
	points := []results.DevicePoint{
		pt("a", 1, 1000, 200, 0), pt("a", 4, 3000, 900, 0), pt("a", 16, 5000, 1000, 0), pt("a", 32, 5100, 1500, 0),
		pt("b", 1, 500, 1200, 0), pt("b", 4, 800, 4000, 0),
		pt("c", 1, 9000, 100, 3), // fast, but not error-free
		{Spec: "d", QD: 1, Errors: 1},
	}
	specs := []Spec{{Name: "a", RandomPct: 100}, {Name: "b", RandomPct: 100}, {Name: "c", RandomPct: 100}, {Name: "d", RandomPct: 100}, {Name: "e", RandomPct: 100},
		{Name: "seq"}}
	points = append(points, pt("seq", 1, 400, 900, 0), pt("seq", 8, 700, 5000, 0), pt("seq", 16, 650, 9000, 0))
	got := specResults(specs, points, time.Millisecond)
	if m := got[0].AtMaxLatency; m == nil || m.QD != 16 || m.IOPS != 5000 || m.P99Us != 1000 {
		t.Errorf("a: %+v, want qd 16 at 5000 IOPS (p99 exactly at the bound counts)", m)
	}
	// A sequential spec is judged on MB/s: its best point is past the p99
	// bound meant for random I/O.
	if m := got[5].AtMaxLatency; got[5].JudgedOn != "mbps" || m == nil || m.QD != 8 {
		t.Errorf("seq: judged on %q, %+v, want mbps at qd 8", got[5].JudgedOn, m)
	}
	for i, want := range map[int]string{
		1: "no queue depth kept p99 at or under 1ms (the lowest p99 was 1.20 ms at qd 1)",
		2: "every point of this spec had I/O errors",
		3: "every point of this spec had I/O errors",
		4: "not measured",
	} {
		if got[i].AtMaxLatency != nil || !strings.Contains(got[i].AtMaxLatencyMissing, want) {
			t.Errorf("%s: %+v / %q, want none because %q", got[i].Name, got[i].AtMaxLatency, got[i].AtMaxLatencyMissing, want)
		}
	}
}

// Repeats: IOPS are their mean, the spread their range and deviation, and
// latency comes from the merged histogram, not an average of percentiles.
func TestPointRepeats(t *testing.T) {
	rep := func(iops float64, lat float64) *Report {
		return &Report{Read: Direction{IOs: 100, IOPS: iops, BytesPerS: iops * 4096,
			Clat: Hist{Bins: map[float64]float64{lat: 100}, N: 100, Sum: 100 * lat, Max: lat}}}
	}
	p := point(Spec{Name: "s", BlockSize: 4096, ReadPct: 100, RandomPct: 100}, 2, 3, []*Report{rep(900, 1000), rep(1100, 3000)})
	if p.IOPS != 1000 || p.MBps != 4.096 || p.Workers != 3 || p.OutstandingIOs != 6 || p.Repeats != 2 {
		t.Errorf("point %+v", p)
	}
	if p.LatUs.Mean != 2 || p.LatUs.P50 != 1 || p.LatUs.P99 != 3 || p.LatUs.Max != 3 {
		t.Errorf("latency %+v, want mean 2, p50 1, p99 3, max 3 µs", *p.LatUs)
	}
	s := p.Spread
	if s == nil || s.IOPSMin != 900 || s.IOPSMax != 1100 || s.IOPSStddev != 141.42 || s.P99UsMin != 1 || s.P99UsMax != 3 {
		t.Errorf("spread %+v", s)
	}
	if p.Read != nil || p.Write != nil {
		t.Error("a read-only point has a direction split")
	}
}

func TestETA(t *testing.T) {
	e := etaEstimate{window: 4 * time.Second, left: 3}
	if got := e.remaining(time.Second); got != 11*time.Second {
		t.Errorf("before any run: %s, want 11s", got)
	}
	e.done(4500 * time.Millisecond)
	if got := e.remaining(0); got != 9*time.Second {
		t.Errorf("after one run with 0.5s overhead: %s, want 9s", got)
	}
}
