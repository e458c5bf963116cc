package device

import "math"

// The SNIA Solid State Storage Performance Test Specification (PTS 2.0)
// steady-state criteria, over a measurement window of rounds of the
// tracking variable (here each round's IOPS):
//
//   - range: max - min of the window within RangeLimitPct of its mean;
//   - slope: the excursion of the window's least-squares line, |slope| x
//     (window - 1) rounds, within SlopeLimitPct of its mean.
const (
	SteadyWindow         = 5
	SteadyRangeLimitPct  = 20.0
	SteadySlopeLimitPct  = 10.0
	DefaultSteadyRounds  = 25
	preconditionPasses   = 2         // workload-independent: 2x the region
	preconditionBlock    = 128 << 10 // in 128 KiB sequential writes
	preconditionQD       = 32
	preconditionMinBlock = 4 << 10
)

// Steady is calibra's judgement of a series of rounds.
type Steady struct {
	Reached bool
	// Round is the last round (from 1) of the window judged: the first
	// window that held both criteria, else the last window there is.
	Round    int
	RangePct float64 // (max - min) / mean x 100 over the window
	SlopePct float64 // |least-squares slope| x (window - 1) / mean x 100
	Mean     float64 // the window's mean
	// Slope and Intercept are the window's best-fit line, IOPS against
	// the round number (from 1).
	Slope, Intercept float64
}

// WindowFit returns a window's range and slope excursion, each as a
// percentage of its mean, with the least-squares line over x = first,
// first+1, ... NaN percentages when the mean is not positive.
func WindowFit(ys []float64, first int) (rangePct, slopePct, mean, slope, intercept float64) {
	n := float64(len(ys))
	if len(ys) == 0 {
		return math.NaN(), math.NaN(), 0, 0, 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var sx, sy float64
	for i, y := range ys {
		sx += float64(first + i)
		sy += y
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	mx, my := sx/n, sy/n
	var sxy, sxx float64
	for i, y := range ys {
		dx := float64(first+i) - mx
		sxy += dx * (y - my)
		sxx += dx * dx
	}
	if sxx > 0 {
		slope = sxy / sxx
	}
	intercept = my - slope*mx
	if my <= 0 {
		return math.NaN(), math.NaN(), my, slope, intercept
	}
	rangePct = (hi - lo) * 100 / my
	slopePct = math.Abs(slope) * (n - 1) * 100 / my
	return rangePct, slopePct, my, slope, intercept
}

// JudgeSteady slides a window of SteadyWindow rounds over iops (one figure
// a round, in order) and returns the first window that holds both
// criteria. With fewer rounds than a window it is not reached, Round 0.
func JudgeSteady(iops []float64) Steady {
	var s Steady
	for end := SteadyWindow; end <= len(iops); end++ {
		s = judgeWindow(iops[end-SteadyWindow:end], end)
		if s.Reached {
			return s
		}
	}
	return s
}

// judgeWindow judges the window ending at round end (from 1).
func judgeWindow(ys []float64, end int) Steady {
	first := end - len(ys) + 1
	r, sl, mean, slope, icpt := WindowFit(ys, first)
	return Steady{
		Reached: r <= SteadyRangeLimitPct && sl <= SteadySlopeLimitPct, // false for NaN
		Round:   end, RangePct: r, SlopePct: sl, Mean: mean, Slope: slope, Intercept: icpt,
	}
}
