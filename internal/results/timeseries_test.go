package results

import (
	"math"
	"strings"
	"testing"
)

func TestReadTimeseries(t *testing.T) {
	ts, err := ReadTimeseries(strings.NewReader("time,cpu_busy_pct,oltp_phase\n" +
		"2026-03-02T14:00:01Z,12.5,rampup\n" +
		"2026-03-02T14:00:02.5Z,,measure\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Time) != 2 || ts.Time[1].Nanosecond() != 5e8 {
		t.Fatalf("times %v", ts.Time)
	}
	cpu := ts.Float("cpu_busy_pct")
	if cpu[0] != 12.5 || !math.IsNaN(cpu[1]) {
		t.Errorf("cpu %v: an empty cell must read as NaN (not measured), never 0", cpu)
	}
	if p := ts.Text("oltp_phase"); p[0] != "rampup" || p[1] != "measure" {
		t.Errorf("phase %v", p)
	}
	if ts.Has("nope") || ts.Float("nope") != nil || ts.Text("nope") != nil {
		t.Error("an absent column must read as absent")
	}
	for _, bad := range []string{"", "when,cpu\n", "time,cpu\nyesterday,1\n", "time,cpu\n2026-03-02T14:00:01Z,1,2\n"} {
		if _, err := ReadTimeseries(strings.NewReader(bad)); err == nil {
			t.Errorf("%q was read without an error", bad)
		}
	}
}
