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

// HostSecond is the host during one logged second of a run: the
// machine's busy CPU and the share used by loads outside calibra's tree,
// in per cent (observe's cpu_busy_pct and cpu_outside_pct), and the
// device's mean time per I/O (disk_await_ms); NaN when not known.
type HostSecond struct{ BusyPct, OutsidePct, AwaitMs float64 }

// The host rule: a fall is the host's, not a burst, when over it the
// other loads' CPU share rose by at least HostRisePct points (medians of
// the seconds before the fall and from it on), the machine's CPU was then
// saturated (busy at least HostSaturatedPct), and the device answered each
// I/O no slower than before (await at most HostAwaitRatio times its
// median before): fewer I/Os were asked of it, not served by it. A full
// cache or spent credits make each I/O slower; other loads growing into
// the CPU a slower workload left do not make it the host's.
const (
	HostRisePct      = 20.0
	HostSaturatedPct = 90.0
	HostAwaitRatio   = 1.5
)

// FallHost is the evidence around a fall: medians of the seconds before
// it and from it on.
type FallHost struct {
	OutsideBefore, OutsideAfter float64
	BusyBefore, BusyAfter       float64
	AwaitBefore, AwaitAfter     float64 // NaN when the device's counters were not read
	// Limited: the rate fell because another load took the CPU.
	Limited bool
}

// JudgeFallHost applies the host rule to a fall DetectBurst found; host is
// aligned with the series it judged. ok is false when either side of the
// fall has no second with its CPU known; without the device's await the
// fall is not the host's (it cannot be told from a slower device).
func JudgeFallHost(b Burst, host []HostSecond) (f FallHost, ok bool) {
	if !b.Found || b.FellAt > len(host) {
		return f, false
	}
	before, after := summarise(host[:b.FellAt]), summarise(host[b.FellAt:])
	if math.IsNaN(before.BusyPct) || math.IsNaN(after.BusyPct) {
		return FallHost{}, false
	}
	f = FallHost{OutsideBefore: before.OutsidePct, OutsideAfter: after.OutsidePct, BusyBefore: before.BusyPct, BusyAfter: after.BusyPct,
		AwaitBefore: before.AwaitMs, AwaitAfter: after.AwaitMs}
	f.Limited = f.OutsideAfter-f.OutsideBefore >= HostRisePct && f.BusyAfter >= HostSaturatedPct &&
		f.AwaitAfter <= HostAwaitRatio*f.AwaitBefore // false when either is NaN
	return f, true
}

// summarise is the medians of seconds: the CPU's over the seconds where
// both its figures are known, the await's over those where it is; NaN
// when none is.
func summarise(hs []HostSecond) HostSecond {
	var busy, outside, await []float64
	for _, h := range hs {
		if !math.IsNaN(h.BusyPct) && !math.IsNaN(h.OutsidePct) {
			busy, outside = append(busy, h.BusyPct), append(outside, h.OutsidePct)
		}
		if !math.IsNaN(h.AwaitMs) {
			await = append(await, h.AwaitMs)
		}
	}
	known := func(xs []float64) float64 {
		if len(xs) == 0 {
			return math.NaN()
		}
		return median(xs)
	}
	return HostSecond{BusyPct: known(busy), OutsidePct: known(outside), AwaitMs: known(await)}
}
