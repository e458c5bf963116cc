package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestMain closes the Chromium the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Close()
	os.Exit(code)
}

// A report of each layer (quick holds device, iocal, oltp build and run,
// ramp and dss; study-a iocal, ramp, dss and an unknown kind) opens in
// headless Chromium with no console error, no script of the data run, and
// every chart drawn; on quick's, the ramp's SLA line is on its chart.
func TestReportRendersInChromium(t *testing.T) {
	t.Parallel() // a tab of its own in the shared Chromium
	browser := browsertest.Shared(t)
	for _, name := range []string{"device-steady", "study-a", "quick"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "report.html")
			var h bytes.Buffer
			r := build(t, name)
			if err := r.HTML(&h); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, h.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			res := browser.Open(t, file)
			checkPage(t, res, len(r.charts))
			if !strings.Contains(res.Text, r.Title) {
				t.Errorf("the title %q is not shown as text", r.Title)
			}
			if name == "quick" {
				checkSLALine(t, r, res)
			}
		})
	}
}

func checkPage(t *testing.T, res browsertest.Result, charts int) {
	t.Helper()
	if len(res.Errors) > 0 {
		t.Errorf("console errors: %q", res.Errors)
	}
	if len(res.Dialogs) > 0 {
		t.Errorf("a script from the data ran (dialogs %q)", res.Dialogs)
	}
	if len(res.Unrendered) > 0 {
		t.Errorf("charts not drawn: %v", res.Unrendered)
	}
	if len(res.Charts) != charts {
		t.Errorf("%d charts drawn, want %d", len(res.Charts), charts)
	}
	for id, drawn := range res.Charts {
		// Axes and labels alone draw about 1%; a series adds more.
		if drawn < 0.01 {
			t.Errorf("chart %s is blank (%.2f%% drawn)", id, drawn*100)
		}
	}
	t.Logf("%d charts rendered in %.0f ms (navigation to the last chart drawn)", len(res.Charts), res.RenderMs)
	if res.PageHeight < 500 {
		t.Errorf("the page is %.0f px tall: nearly empty", res.PageHeight)
	}
}

// The label <script>alert(1)</script> is shown as text, never run.
func TestLabelIsShownNotRun(t *testing.T) {
	t.Parallel()
	browser := browsertest.Shared(t)
	dir := t.TempDir()
	for _, f := range []string{"results.json", results.TimeseriesFile} {
		data, err := os.ReadFile(filepath.Join(runs, "oltp-xss", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	res := browser.Open(t, filepath.Join(dir, "report.html"))
	if len(res.Dialogs) > 0 {
		t.Fatalf("the label ran as a script: dialogs %q", res.Dialogs)
	}
	if !strings.Contains(res.Text, "<script>alert(1)</script>") {
		t.Errorf("the label is not shown as text:\n%.500s", res.Text)
	}
}

// An hour of one-second samples: report.html stays under 5 MB. The render
// time is logged (go test -v), not asserted: timings are noisy here.
func TestHourLongRunStaysSmall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds an hour-long run; skipped under -short")
	}
	run, ts := hourLongRun(t)
	var h bytes.Buffer
	r := Build(run, ts)
	if err := r.HTML(&h); err != nil {
		t.Fatal(err)
	}
	t.Logf("report.html for an hour: %.2f MB", float64(h.Len())/1e6)
	if h.Len() > 5e6 {
		t.Errorf("report.html is %d bytes for an hour-long run, over 5 MB", h.Len())
	}
	browser := browsertest.Shared(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res := browser.Open(t, file)
	checkPage(t, res, len(r.charts))
}

// hourLongRun is the oltp fixture stretched to an hour: a timed window of
// 3,600 s and a sample every second.
func hourLongRun(t *testing.T) (*results.Run, *results.Timeseries) {
	t.Helper()
	run, err := results.Load(filepath.Join(runs, "oltp-base"))
	if err != nil {
		t.Fatal(err)
	}
	start := run.Steps[len(run.Steps)-1].StartedAt
	end := start.Add(time.Hour)
	st := &run.Steps[len(run.Steps)-1]
	st.FinishedAt = &end
	st.Observe.To = end
	var csv strings.Builder
	cols := []string{"cpu_busy_pct", "cpu_iowait_pct", "disk_r_iops", "disk_w_iops", "disk_r_mbps", "disk_w_mbps", "disk_await_ms",
		"db_data_file_read_avg_ms", "db_wal_sync_avg_ms", "oltp_phase", "oltp_tpm_client", "oltp_nopm_client", "oltp_art_ms", "oltp_p90_ms"}
	csv.WriteString("time," + strings.Join(cols, ",") + "\n")
	for s := 1; s <= 3600; s++ {
		at := start.Add(time.Duration(s)*time.Second + 123456789)
		phase := "measure"
		if s <= 120 {
			phase = "rampup"
		}
		v := func(base, amp float64) string { return fmt.Sprintf("%.3f", base+amp*math.Sin(float64(s)/37)) }
		fmt.Fprintf(&csv, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", at.Format(time.RFC3339Nano),
			v(60, 20), v(12, 8), v(1500, 700), v(900, 300), v(12, 6), v(40, 15), v(0.9, 0.4), v(0.2, 0.1), v(0.6, 0.3),
			phase, v(52000, 9000), v(23000, 4000), v(2.5, 1), v(4.8, 2))
	}
	ts, err := results.ReadTimeseries(strings.NewReader(csv.String()))
	if err != nil {
		t.Fatal(err)
	}
	return run, ts
}

// checkSLALine: the ramp's SLA line is on the chart even when every load
// stays far below it: the quick study's ART peaks near 3 ms against a
// 50 ms SLA, and the right axis must reach 50.
func checkSLALine(t *testing.T, r *Report, res browsertest.Result) {
	t.Helper()
	var sla *assets.Chart
	for i, c := range r.charts {
		for _, m := range c.MarkY {
			if strings.HasPrefix(m.Label, "SLA ") {
				sla = &r.charts[i]
			}
		}
	}
	if sla == nil {
		t.Fatal("the ramp's chart has no SLA line")
	}
	tops := res.YMax[sla.ID]
	if len(tops) < 2 || tops[1] < sla.MarkY[0].Value {
		t.Fatalf("the right axis tops out at %v, below the SLA of %v ms", tops, sla.MarkY[0].Value)
	}
}

// On a 400 px screen the page does not scroll sideways: wide tables scroll
// in their own box, and every chart is drawn.
func TestTheReportReadsOnAPhone(t *testing.T) {
	t.Parallel()
	browser := browsertest.Shared(t).Sized(400, 900)
	r := build(t, "quick")
	file := filepath.Join(t.TempDir(), "report.html")
	var h bytes.Buffer
	if err := r.HTML(&h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res := browser.Open(t, file)
	checkPage(t, res, len(r.charts))
	if res.PageWidth > 400 {
		t.Errorf("the page is %.0f px wide on a 400 px screen", res.PageWidth)
	}
}
