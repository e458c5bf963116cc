package device

import (
	"math"
	"testing"
)

// The PTS criteria on hand-computed windows: range and slope excursion as
// a percentage of the window's mean, the first window holding both.
func TestJudgeSteady(t *testing.T) {
	for _, tc := range []struct {
		name                string
		iops                []float64
		reached             bool
		round               int
		rangePct, slopePct  float64
		mean, slope, interc float64
	}{
		{"flat", []float64{100, 100, 100, 100, 100}, true, 5, 0, 0, 100, 0, 100},
		// dy -2..2 against 0,4,-4,2,-2: sxy -6, sxx 10, slope -0.6, excursion 2.4.
		{"noisy but level", []float64{100, 104, 96, 102, 98}, true, 5, 8, 2.4, 100, -0.6, 101.8},
		{"rising", []float64{100, 110, 120, 130, 140}, false, 5, 100.0 / 3, 100.0 / 3, 120, 10, 90},
		// The range is on its limit (20% passes), the line's excursion is not.
		{"range on the limit, slope over", []float64{90, 95, 100, 105, 110}, false, 5, 20, 20, 100, 5, 85},
		// A level line (slope 0) through a window too wide.
		{"level but wide", []float64{80, 120, 100, 120, 80}, false, 5, 40, 0, 100, 0, 100},
		// Burst then settling: the window of rounds 6-10 is the first to hold.
		{"settling", []float64{5000, 3000, 2000, 1500, 1200, 1100, 1050, 1000, 1020, 990, 1010}, true, 10,
			10.658914728682, 9.689922480620, 1032, -25, 1232},
		// Never settles: the last window (rounds 2-6, mean 160) is reported.
		{"never", []float64{100, 200, 100, 200, 100, 200}, false, 6, 62.5, 0, 160, 0, 160},
		{"too few rounds", []float64{100, 100, 100, 100}, false, 0, 0, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := JudgeSteady(tc.iops)
			if s.Reached != tc.reached || s.Round != tc.round {
				t.Fatalf("reached %t at round %d, want %t at %d (%+v)", s.Reached, s.Round, tc.reached, tc.round, s)
			}
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"range", s.RangePct, tc.rangePct}, {"slope", s.SlopePct, tc.slopePct}, {"mean", s.Mean, tc.mean},
				{"line slope", s.Slope, tc.slope}, {"intercept", s.Intercept, tc.interc}} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s %.12g, want %.12g", c.what, c.got, c.want)
				}
			}
		})
	}
}

// A window with no I/O is never steady: its percentages are NaN.
func TestJudgeSteadyZero(t *testing.T) {
	s := JudgeSteady([]float64{0, 0, 0, 0, 0})
	if s.Reached || !math.IsNaN(s.RangePct) || !math.IsNaN(s.SlopePct) {
		t.Errorf("a window of zeros: %+v", s)
	}
}
