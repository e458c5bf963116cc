package cli

import (
	"encoding/csv"
	"encoding/json"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
)

const fixtureRuns = "../results/testdata/runs"

// copyRun copies a fixture run directory, so tests may write into it.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(fixtureRuns, name))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fixtureRuns, name, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReportRebuildsBothFiles(t *testing.T) {
	dir := copyRun(t, "study-b")
	code, stdout, stderr := clitest.Run(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"report.html", "report.md"} {
		if !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("stdout does not name %s: %q", f, stdout)
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "interrupted") {
			t.Errorf("%s does not mark the interrupted run", f)
		}
	}
}

func TestCompareTwoRuns(t *testing.T) {
	a, b := filepath.Join(fixtureRuns, "oltp-base"), filepath.Join(fixtureRuns, "oltp-xss")
	code, stdout, stderr := clitest.Run(t, "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "NOPM ↑") || !strings.Contains(stdout, "+89.26% (n=1, no verdict)") || regexp.MustCompile(`(?m)(better|worse)\s*$`).MatchString(stdout) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = clitest.Run(t, "compare", a, b, "--format", "csv")
	if recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll(); code != 0 || err != nil || len(recs) < 3 {
		t.Errorf("csv: exit %d, %d records, %v", code, len(recs), err)
	}
	code, stdout, _ = clitest.Run(t, "compare", a, b, "--format", "json")
	var tab struct{ Rows []any }
	if err := json.Unmarshal([]byte(stdout), &tab); code != 0 || err != nil || len(tab.Rows) == 0 {
		t.Errorf("json: exit %d, %v", code, err)
	}
	html := filepath.Join(t.TempDir(), "cmp.html")
	if code, _, stderr := clitest.Run(t, "compare", a, b, "--format", "md", "--html", html); code != 0 {
		t.Fatalf("--html: exit %d: %s", code, stderr)
	}
	if st, err := os.Stat(html); err != nil || st.Size() < 100_000 {
		t.Errorf("--html wrote %v, %v", st, err)
	}
}

func TestReportAndCompareBadInput(t *testing.T) {
	empty := t.TempDir()
	broken, future := t.TempDir(), t.TempDir()
	_ = os.WriteFile(filepath.Join(broken, "results.json"), []byte("{not json"), 0o644)
	_ = os.WriteFile(filepath.Join(future, "results.json"), []byte(`{"schema":"calibra.results/v2"}`), 0o644)
	dev, oltp := filepath.Join(fixtureRuns, "device-a"), filepath.Join(fixtureRuns, "oltp-base")
	huge := t.TempDir() // a results.json under its read bound, of more steps than a report shows
	{
		var r map[string]any
		data, err := os.ReadFile(filepath.Join(oltp, "results.json"))
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err != nil {
			t.Fatal(err)
		}
		steps := make([]any, report.MaxBytes/256+1)
		for i := range steps {
			steps[i] = map[string]any{"kind": "future_kind", "name": "x", "status": "complete", "started_at": "2026-03-02T14:04:00Z"}
		}
		r["steps"] = steps
		if data, err = json.Marshal(r); err == nil {
			err = os.WriteFile(filepath.Join(huge, "results.json"), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"report without results.json", []string{"report", empty}, "holds no results.json; give the run directory"},
		{"report of broken JSON", []string{"report", broken}, "is not valid JSON"},
		{"report of an unknown schema", []string{"report", future}, `has schema "calibra.results/v2", but this calibra reads "calibra.results/v1"`},
		{"report past its bound", []string{"report", huge}, "would be more than 64 MiB (262145 steps, 0 chart points)"},
		{"report without a directory", []string{"report"}, "calibra report takes one run directory, but was given 0"},
		{"compare one run", []string{"compare", dev}, "calibra compare takes two or more run directories, but was given 1"},
		{"compare with no step in common", []string{"compare", dev, oltp}, "share no step"},
		{"compare a directory that is no run", []string{"compare", dev, empty}, "holds no results.json"},
		{"compare in an unknown format", []string{"compare", dev, dev, "--format", "xml"}, `--format "xml" is not a compare format; use text, md, csv, json`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", code, stdout, stderr, c.want)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 {
				t.Errorf("%d lines on stderr, want one sentence", len(lines))
			}
		})
	}
	if _, err := os.Stat(filepath.Join(broken, "report.html")); err == nil {
		t.Error("a report was written for broken input")
	}
}

// A real run writes its report at its end; a failed one too, marked.
func TestRunsWriteTheirReport(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "failed")
	code, _, _ := clitest.Run(t, "device", "--path", target, "--fio", clitest.FakeFio(t, "fio-3.33"), "--out", out, "--progress", "none")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "This run is failed") {
		t.Fatalf("report.md of the failed run: %v\n%s", err, md)
	}

	clitest.RequireFio(t)
	out = filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--specs", "4k-randread", "--qd", "1,4",
		"--runtime", "1s", "--ramp", "0s", "--size", "16MiB", "--out", out, "--progress", "none", "--label", "<script>alert(1)</script>\x1b]0;pwned\x07")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := browsertest.New(t).Open(t, filepath.Join(out, "report.html"))
	if len(res.Errors) > 0 || len(res.Dialogs) > 0 || len(res.Unrendered) > 0 || len(res.Charts) == 0 {
		t.Fatalf("report.html of a real run: errors %q, dialogs %q, undrawn %v, %d charts", res.Errors, res.Dialogs, res.Unrendered, len(res.Charts))
	}
	for id, drawn := range res.Charts {
		if drawn < 0.01 {
			t.Errorf("chart %s is blank", id)
		}
	}
	if !strings.Contains(res.Text, "<script>alert(1)</script>") {
		t.Error("the label is not shown as text")
	}
	// A terminal escape in a label is dropped before it reaches any file.
	if r, err := results.Load(out); err != nil || r.Meta.Label != "<script>alert(1)</script>]0;pwned" {
		t.Errorf("label kept as %q (%v), want its control characters dropped", r.Meta.Label, err)
	}
}

// calibra report prints the summary the run printed at its end: the same
// text, from the same results.json.
func TestReportPrintsTheRunsSummary(t *testing.T) {
	dir := copyRun(t, "quick")
	code, stdout, stderr := clitest.Run(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := runner.SummaryText(r, r.Status); !strings.HasPrefix(stdout, want) {
		t.Fatalf("stdout does not start with the summary:\n%s", stdout)
	}
	for _, line := range []string{"run: complete", "nopm            60865", "limited by storage: 4k-randread at qd 16", "max_tps 2687.5, max_users_within_sla ≥ 8 (SLA not reached)"} {
		if !strings.Contains(stdout, line) {
			t.Errorf("the summary lacks %q", line)
		}
	}
}
