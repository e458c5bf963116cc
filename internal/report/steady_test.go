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
	// 4k-randread at qd 1 was not steady after 8 rounds: the last window.
	if len(c.Series) != 2 || len(c.Series[0].Y) != 8 {
		t.Fatalf("series %+v: want 8 rounds and the fit line", c.Series)
	}
	if len(c.Areas) != 1 || c.Areas[0].From != 4 || c.Areas[0].To != 8 {
		t.Errorf("window %+v, want rounds 4 to 8", c.Areas)
	}
	if fx := c.Series[1].X; len(fx) != 2 || fx[0] != 4 || fx[1] != 8 {
		t.Errorf("the fit line spans %v, want the window 4..8", fx)
	}
	// At qd 8 it was steady at round 7: the window is rounds 3 to 7.
	if a := r.charts[conv[1]].Areas; len(a) != 1 || a[0].From != 3 || a[0].To != 7 {
		t.Errorf("the steady point's window %+v, want rounds 3 to 7", a)
	}
	if len(c.MarkY) != 3 || c.MarkY[1].Value <= c.MarkY[0].Value || c.MarkY[2].Value >= c.MarkY[0].Value {
		t.Errorf("marks %+v: want the mean and its ±10%% band", c.MarkY)
	}
	var md bytes.Buffer
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Steady state (SNIA PTS 2.0)", "Steady state per point", "| 4k-randread | 8 | yes | 7 |",
		"Bursts: points whose rate fell", "IOPS at p99 within each bound"} {
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

// The write-saturation plot: per spec that writes, IOPS each second
// against GiB written, a series a queue depth, the burst's fall marked.
func TestWSATChart(t *testing.T) {
	r := build(t, "device-steady")
	var found int
	for _, c := range r.charts {
		if c.XName != "GiB written" {
			continue
		}
		found++
		if len(c.Series) != 2 || c.Series[0].Name != "qd 1" || len(c.Series[0].X) != len(c.Series[0].Y) {
			t.Errorf("series %+v", c.Series)
		}
		if len(c.MarkX) != 1 || c.MarkX[0].Label != "qd 1 fell" || c.MarkX[0].Value <= 0 {
			t.Errorf("marks %+v, want qd 1's fall", c.MarkX)
		}
	}
	if found != 1 {
		t.Errorf("%d write-saturation charts, want 1 (8k-randwrite)", found)
	}
}
