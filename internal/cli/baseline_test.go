package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
)

// writeDeviceRun writes a run directory of the device study "ci" whose
// device step ran once per value, each its 4k random read IOPS.
func writeDeviceRun(t *testing.T, dir, label string, at time.Time, iops ...float64) string {
	t.Helper()
	r := &results.Run{Schema: results.Schema, Status: results.StatusComplete, StartedAt: at, Meta: results.Meta{Command: "run", Label: label,
		Host: results.Host{Hostname: "ci-1"}, Storage: results.Storage{Path: "/mnt/array"}, Study: map[string]any{"name": "ci"}}}
	for i, v := range iops {
		r.Steps = append(r.Steps, results.Step{StepHeader: results.StepHeader{Kind: "device", Name: "device", Status: results.StatusComplete,
			StudyStep: 1, Repeat: i + 1, Repeats: len(iops)},
			Body: &results.Device{MaxLatencyUs: 1000, Specs: []results.DeviceSpec{{Name: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100,
				AtMaxLatency: &results.DeviceBest{QD: 1, IOPS: v}}}}})
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, fmt.Sprintf("%s_%s", at.Format("20060102T150405Z"), label))
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// compare --baseline judges a run directory against the store's runs of
// the same target: exit 3 when a headline figure fell significantly
// beyond the allowance, 0 with "pass" within noise, 0 with the reason in
// a sentence when there is no verdict.
func TestCompareBaseline(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "store", "r.db")
	day := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	var base []string
	for i, iops := range [][]float64{{1000, 1010}, {990, 1005}, {1002, 998}} {
		base = append(base, writeDeviceRun(t, dir, "nightly", day.Add(time.Duration(i)*24*time.Hour), iops...))
	}
	clitest.MustRun(t, 0, append([]string{"store", "import", "--store", db}, base...)...)
	later := day.Add(5 * 24 * time.Hour)
	for _, tc := range []struct {
		name   string
		iops   []float64
		args   []string
		code   int
		output []string
	}{
		{"clearly worse", []float64{500, 510, 505}, nil, 3, []string{"regressed: 4k random read IOPS (p99 ≤ 1 ms) fell 49.", "3, 6", "regressed"}},
		{"clearly worse, beyond a larger allowance", []float64{500, 510, 505}, []string{"--max-regression", "60"}, 0, []string{": pass", "worse within the allowance"}},
		{"within noise", []float64{1003, 992, 1008}, nil, 0, []string{"(3 stored runs): pass", "~"}},
		{"better", []float64{1500, 1510, 1505}, nil, 0, []string{": pass", "better"}},
		{"two repeats", []float64{500, 510}, nil, 0, []string{"no verdict: the run has 2 values of each figure and its baseline 6: a verdict needs 3 a side"}},
		{"a baseline of one run", []float64{500, 510, 505}, []string{"--baseline-runs", "1"}, 0,
			[]string{"(1 stored run): no verdict: the run has 3 values of each figure and its baseline 2", "no verdict (n=3 against 2; 3 a side needed)"}},
		{"a label with no runs", []float64{500, 510, 505}, []string{"--baseline", "golden"}, 0,
			[]string{"no verdict: the results store holds no complete labelled golden run of the same target (calibra run (study ci) at /mnt/array on host ci-1)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := writeDeviceRun(t, t.TempDir(), "candidate", later, tc.iops...)
			args := append([]string{"compare", "--store", db, "--baseline", "last", run}, tc.args...)
			code, stdout, stderr := clitest.Run(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.output {
				if !strings.Contains(stdout, want) {
					t.Errorf("the output lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
	// JSON: the same section results.json gets.
	run := writeDeviceRun(t, t.TempDir(), "candidate", later, 500, 510, 505)
	code, stdout, _ := clitest.Run(t, "compare", "--store", db, "--baseline", "nightly", "--format", "json", run)
	var b results.Baseline
	if err := json.Unmarshal([]byte(stdout), &b); code != 3 || err != nil || !b.Regressed || len(b.Runs) != 3 || len(b.Figures) != 1 || b.Figures[0].P == nil || b.Figures[0].BaseN != 6 {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
}
