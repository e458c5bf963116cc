package report

import (
	"bytes"
	"strings"
	"testing"
)

// A steady-state sweep draws one convergence chart a point: every round's
// IOPS, the judged window shaded, its mean and ±10% band, and its best-fit
// line over the window alone.
func TestSteadyConvergenceCharts(t *testing.T) {
	r := build(t, "device-steady")
	var conv []int
	for i, c := range r.charts {
		if c.XName == "round" {
			conv = append(conv, i)
		}
	}
	if len(conv) != 4 {
		t.Fatalf("%d convergence charts, want one a point (4)", len(conv))
	}
	c := r.charts[conv[0]]
	if len(c.Series) != 2 || len(c.Series[0].Y) != 10 {
		t.Fatalf("series %+v: want 10 rounds and the fit line", c.Series)
	}
	if len(c.Areas) != 1 || c.Areas[0].From != 6 || c.Areas[0].To != 10 {
		t.Errorf("window %+v, want rounds 6 to 10", c.Areas)
	}
	if fx := c.Series[1].X; len(fx) != 2 || fx[0] != 6 || fx[1] != 10 {
		t.Errorf("the fit line spans %v, want the window 6..10", fx)
	}
	if len(c.MarkY) != 3 || c.MarkY[1].Value <= c.MarkY[0].Value || c.MarkY[2].Value >= c.MarkY[0].Value {
		t.Errorf("marks %+v: want the mean and its ±10%% band", c.MarkY)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Steady state (SNIA PTS 2.0)", "Steady state per point"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// A fresh-out-of-box sweep says it is a first look, in report.md too.
func TestFreshOutOfBoxIsAFirstLook(t *testing.T) {
	r := build(t, "device-a")
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "a first look, not steady state") {
		t.Errorf("report.md does not call the sweep a first look:\n%s", md.String())
	}
	for _, c := range r.charts {
		if c.XName == "round" {
			t.Errorf("a fresh-out-of-box sweep drew a convergence chart")
		}
	}
}
