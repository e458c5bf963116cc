package device

import (
	"math"
	"testing"
)

// The detector on hand-made series: where the rate fell and what it
// settled at, and the shapes that are no burst.
func TestDetectBurst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		iops    []float64
		found   bool
		fellAt  int
		peak    float64
		settled float64
		drop    float64
	}{
		// A write cache full after 4 s: 10k, then 2k. Smoothed, index 4
		// is median(10k, 2k, 2k) = 2k, under the midpoint 6k.
		{"cache fills", []float64{10000, 10000, 10000, 10000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000}, true, 4, 10000, 2000, 80},
		// One odd second in the burst is smoothed over; the fall is kept.
		{"a dip inside the burst", []float64{9000, 3000, 9000, 9000, 9000, 9000, 1000, 1000, 1000, 1000, 1000, 1000}, true, 6, 9000, 1000, 88.88888888888889},
		// A gradual decline: the fall is where it crosses the midpoint
		// (4750, between the first pair's median 7500 and 2000).
		{"gradual", []float64{8000, 7000, 6000, 5000, 4000, 3000, 2000, 2000, 2000, 2000}, true, 4, 7500, 2000, 73.33333333333333},
		{"level", []float64{5000, 5100, 4900, 5000, 5050, 4950, 5000, 5000}, false, 0, 5050, 5000, 0.9900990099009901},
		// Down by a fifth: noise on a shared host, not a burst.
		{"a small step", []float64{5000, 5000, 5000, 5000, 4000, 4000, 4000, 4000}, false, 0, 5000, 4000, 20},
		{"rising", []float64{1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000}, false, 0, 5000, 7000, -40},
		// Down and back up: the tail is where it started.
		{"dip and recovery", []float64{5000, 5000, 1000, 1000, 1000, 5000, 5000, 5000}, false, 0, 5000, 5000, 0},
		{"too short", []float64{10000, 10000, 1000, 1000, 1000}, false, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := DetectBurst(tc.iops)
			if b.Found != tc.found || b.FellAt != tc.fellAt {
				t.Fatalf("found %t at %d, want %t at %d (%+v)", b.Found, b.FellAt, tc.found, tc.fellAt, b)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"peak", b.PeakIOPS, tc.peak}, {"settled", b.SettledIOPS, tc.settled}, {"drop", b.DropPct, tc.drop}} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s %.12g, want %.12g", c.what, c.got, c.want)
				}
			}
		})
	}
}

// The host rule on hand-made seconds around a fall at second 4: a load that
// arrives and takes the CPU while the device answers as fast as before is
// the host's fall; a cache that fills (each I/O slower) is a burst even as
// other loads grow into the CPU it left, and so is any fall without the
// evidence.
func TestJudgeFallHost(t *testing.T) {
	fall := DetectBurst([]float64{10000, 10000, 10000, 10000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000})
	seconds := func(before, after HostSecond) []HostSecond {
		var hs []HostSecond
		for i := range 12 {
			if i < fall.FellAt {
				hs = append(hs, before)
			} else {
				hs = append(hs, after)
			}
		}
		return hs
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name          string
		before, after HostSecond
		ok, limited   bool
	}{
		{"another load arrives and takes the CPU", HostSecond{55, 3, 0.2}, HostSecond{100, 70, 0.2}, true, true},
		{"another load takes a CPU the workload saturated", HostSecond{98, 5, 0.4}, HostSecond{100, 60, 0.3}, true, true},
		// The cliff on this VM: other work grew into the CPU the lab's
		// server left, and the device's await rose sevenfold.
		{"a cache fills while other loads grow", HostSecond{81, 43, 0.14}, HostSecond{95, 77, 0.95}, true, false},
		{"a cache fills on a quiet host", HostSecond{60, 2, 0.1}, HostSecond{25, 3, 4}, true, false},
		{"a load arrives but CPU is left", HostSecond{40, 5, 0.2}, HostSecond{75, 40, 0.2}, true, false},
		{"the other loads rise by less than the rule", HostSecond{70, 10, 0.2}, HostSecond{95, 25, 0.2}, true, false},
		{"no device counters", HostSecond{55, 3, nan}, HostSecond{100, 70, nan}, true, false},
		{"no CPU before the fall", HostSecond{nan, nan, 0.2}, HostSecond{100, 70, 0.2}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := JudgeFallHost(fall, seconds(tc.before, tc.after))
			if ok != tc.ok || f.Limited != tc.limited {
				t.Fatalf("ok %t limited %t, want %t %t (%+v)", ok, f.Limited, tc.ok, tc.limited, f)
			}
		})
	}
	if _, ok := JudgeFallHost(fall, nil); ok {
		t.Error("judged a fall with no seconds of evidence")
	}
	if _, ok := JudgeFallHost(Burst{}, seconds(HostSecond{55, 3, 0.2}, HostSecond{100, 70, 0.2})); ok {
		t.Error("judged the host of a run whose rate did not fall")
	}
}
