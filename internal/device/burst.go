package device

import (
	"math"
	"slices"
)

// The burst detector's rules: a run needs BurstMinSamples per-second
// figures; its settled rate is the median of its last quarter (at least
// 3 samples); it had a burst when the peak before that tail, over a
// 3-sample running median (one odd second is not a burst), is at least
// BurstMinDropPct above what it settled at, as a share of the peak.
const (
	BurstMinSamples = 6
	BurstMinDropPct = 30.0
)

// Burst is what DetectBurst found in a series of per-interval IOPS.
type Burst struct {
	Found bool
	// FellAt is the index of the first interval, after the peak, whose
	// running median is at or under the midpoint of peak and settled rate:
	// where the rate fell.
	FellAt      int
	PeakIOPS    float64 // the running median's peak before the tail
	SettledIOPS float64 // the tail's median
	DropPct     float64 // (peak - settled) x 100 / peak
}

// DetectBurst looks for a rate that fell during a run and stayed down: a
// cache or an SLC region absorbing writes until full, a token bucket
// running out. A rate that rises, dips and recovers, or wobbles within
// BurstMinDropPct is no burst.
func DetectBurst(iops []float64) Burst {
	n := len(iops)
	if n < BurstMinSamples {
		return Burst{}
	}
	tail := max(3, n/4)
	settled := median(iops[n-tail:])
	smooth := runningMedian3(iops)
	head := smooth[:n-tail]
	peakAt := 0
	for i, v := range head {
		if v > head[peakAt] {
			peakAt = i
		}
	}
	peak := head[peakAt]
	if peak <= 0 || settled < 0 {
		return Burst{}
	}
	drop := (peak - settled) * 100 / peak
	b := Burst{PeakIOPS: peak, SettledIOPS: settled, DropPct: drop}
	if drop < BurstMinDropPct {
		return b
	}
	mid := (peak + settled) / 2
	for i := peakAt + 1; i < n; i++ {
		if smooth[i] <= mid {
			b.Found, b.FellAt = true, i
			return b
		}
	}
	return b
}

// runningMedian3 is each sample's median with its neighbours (the ends
// with their one neighbour and themselves).
func runningMedian3(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i := range xs {
		lo, hi := max(i-1, 0), min(i+2, len(xs))
		out[i] = median(xs[lo:hi])
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// HostSecond is the host's CPU during one logged second of a run, in per
// cent of the machine: busy, and used by loads outside calibra's tree
// (observe's cpu_busy_pct and cpu_outside_pct); NaN when not known.
type HostSecond struct{ BusyPct, OutsidePct float64 }

// The host rule: a fall is the host's, not a burst, when the other loads'
// CPU share, median over the seconds from the fall on, is at least
// HostRisePct points above its median before the fall, and the machine
// had CPU to spare before the fall (busy under HostSaturatedPct) and none
// after. On a machine already saturated before the fall, other loads that
// grow after it only take the CPU a slower workload left: the fall stays a
// burst.
const (
	HostRisePct      = 20.0
	HostSaturatedPct = 90.0
)

// FallHost is the CPU evidence around a fall: medians of the seconds
// before it and from it on.
type FallHost struct {
	OutsideBefore, OutsideAfter float64
	BusyBefore, BusyAfter       float64
	// Limited: the rate fell because another load took the CPU.
	Limited bool
}

// JudgeFallHost applies the host rule to a fall DetectBurst found; host is
// aligned with the series it judged. ok is false when either side of the
// fall has no second with both figures known.
func JudgeFallHost(b Burst, host []HostSecond) (f FallHost, ok bool) {
	if !b.Found || b.FellAt > len(host) {
		return f, false
	}
	side := func(hs []HostSecond) (float64, float64, bool) {
		var busy, outs []float64
		for _, h := range hs {
			if !math.IsNaN(h.BusyPct) && !math.IsNaN(h.OutsidePct) {
				busy, outs = append(busy, h.BusyPct), append(outs, h.OutsidePct)
			}
		}
		return median(busy), median(outs), len(busy) > 0
	}
	var okBefore, okAfter bool
	f.BusyBefore, f.OutsideBefore, okBefore = side(host[:b.FellAt])
	f.BusyAfter, f.OutsideAfter, okAfter = side(host[b.FellAt:])
	if !okBefore || !okAfter {
		return FallHost{}, false
	}
	f.Limited = f.OutsideAfter-f.OutsideBefore >= HostRisePct && f.BusyBefore < HostSaturatedPct && f.BusyAfter >= HostSaturatedPct
	return f, true
}
