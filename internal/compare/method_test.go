package compare

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// deviceRun is a run of n device steps (repetitions of one step) whose
// 4k-randread answer is iops, held to steady state or not.
func deviceRun(label string, n int, iops float64, steady bool) Run {
	r := Run{Label: label, Dir: label, Run: &results.Run{Status: "complete"}}
	for i := range n {
		d := &results.Device{FreshOutOfBox: !steady, MaxLatencyUs: 1000, Specs: []results.DeviceSpec{{Name: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, JudgedOn: "p99_bound",
			AtMaxLatency: &results.DeviceBest{QD: 8, IOPS: iops + float64(i), P99Us: 500}}}}
		if steady {
			d.SteadyState = &results.DeviceSteadyMethod{WindowRounds: 5}
		}
		r.Steps = append(r.Steps, results.Step{StepHeader: results.StepHeader{Kind: results.KindDevice, Name: "device", Status: "complete"}, Body: d})
	}
	return r
}

// With four repetitions a side, 50,000 IOPS against 80,000 is "better"
// when both sides used one method; steady state against fresh out of box
// gets no verdict, its delta still shown, and a footnote says why.
func TestMethodsDifferNoVerdict(t *testing.T) {
	same, err := Compare([]Run{deviceRun("a", 4, 50000, false), deviceRun("b", 4, 80000, false)})
	if err != nil {
		t.Fatal(err)
	}
	if v := same.Rows[0].Deltas[1].Verdict; v != "better" {
		t.Fatalf("one method: verdict %q, want better (the test's premise)", v)
	}
	var sameText strings.Builder
	if err := same.Write(&sameText, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sameText.String(), "+60.00% (p=0.029 n=4) better") {
		t.Fatalf("one method: the text table does not mark the delta better:\n%s", sameText.String())
	}
	for _, steadyFirst := range []bool{false, true} {
		tab, err := Compare([]Run{deviceRun("a", 4, 50000, steadyFirst), deviceRun("b", 4, 80000, !steadyFirst)})
		if err != nil {
			t.Fatal(err)
		}
		d := tab.Rows[0].Deltas[1]
		if d.Verdict != NoVerdictMethod || d.Better || d.Pct == nil {
			t.Errorf("steady first %t: delta %+v, want no verdict with the change shown", steadyFirst, d)
		}
		if len(tab.Summary) == 0 || tab.Summary[0].Verdict[1] != NoVerdictMethod {
			t.Errorf("the summary bar: %+v", tab.Summary)
		}
		foot := strings.Join(tab.Footnotes, "\n")
		for _, want := range []string{"they differ in method", "at steady state (SNIA PTS)", "fresh out of box (a first look)"} {
			if !strings.Contains(foot, want) {
				t.Errorf("footnotes lack %q:\n%s", want, foot)
			}
		}
		var text strings.Builder
		if err := tab.Write(&text, "text"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "methods differ, no verdict") {
			t.Errorf("the text table:\n%s", text.String())
		}
		for _, line := range strings.Split(text.String(), "\n") {
			if strings.Contains(line, "+60.00%") && (strings.HasSuffix(line, " better") || strings.HasSuffix(line, " worse")) {
				t.Errorf("a delta is judged: %q", line)
			}
		}
	}
}
