package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// copyRun copies a fixture's run directory to a new one.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(runs, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(runs, name, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkRefused wants err to be one input sentence refusing the report,
// and no report written.
func checkRefused(t *testing.T, dir string, err error) {
	t.Helper()
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "would be more than") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Write: %v (exit %d); want one sentence refusing the report", err, fault.Code(err))
	}
	for _, f := range []string{"report.html", "report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// A report past MaxBytes is refused in one sentence and not written,
// whether the step count says so before the layout, the charts' points
// while it is laid out, or the rendering as it is written.
func TestWriteRefusesAReportPastItsBound(t *testing.T) {
	old := MaxBytes
	defer func() { MaxBytes = old }()
	var full bytes.Buffer
	if err := build(t, "quick").HTML(&full); err != nil {
		t.Fatal(err)
	}
	rep := build(t, "quick")
	for _, c := range []struct {
		name string
		max  int
	}{
		{"too many steps", minStepBytes * 3},                      // 7 steps
		{"too many chart points", rep.estimate() - 1},             // laid out in part
		{"rendered past it", max(full.Len()-1, rep.estimate()+1)}, // written in part
	} {
		t.Run(c.name, func(t *testing.T) {
			MaxBytes = c.max
			dir := copyRun(t, "quick")
			checkRefused(t, dir, Write(dir))
		})
	}
	MaxBytes = full.Len()
	dir := copyRun(t, "quick")
	if err := Write(dir); err != nil {
		t.Errorf("a report of exactly MaxBytes: %v", err)
	}
}

// A results.json under the read bound, of more steps than a report may
// show, is refused before it is laid out (it cost 4.9 GB of memory and
// wrote an 800 MB report), at the default bound.
func TestWriteRefusesARunOfTooManySteps(t *testing.T) {
	dir := copyRun(t, "study-b")
	var run map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	steps := make([]any, MaxBytes/minStepBytes+1)
	for i := range steps {
		steps[i] = map[string]any{"kind": "future_kind", "name": "x", "status": "complete", "started_at": "2026-03-02T14:04:00Z"}
	}
	run["steps"] = steps
	if data, err = json.Marshal(run); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	checkRefused(t, dir, Write(dir))
}
