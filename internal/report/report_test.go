package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/results"
)

// runs are the run directories the tests read: real runs of calibra
// (oltp-*, device-*) and hand-made ones for the layers that do not run yet.
const runs = "../results/testdata/runs"

func fixtures(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(runs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func build(t *testing.T, name string) *Report {
	t.Helper()
	dir := filepath.Join(runs, name)
	run, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := results.LoadTimeseries(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Build(run, ts)
}

func TestMarkdownGolden(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := build(t, name).Markdown(&b); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".md"), b.Bytes())
		})
	}
}

// Every step gets a section in layer order; a kind this calibra does not
// know is listed, not dropped; a run that did not complete says so.
func TestSectionsFollowTheLayers(t *testing.T) {
	r := build(t, "study-b")
	var kinds []string
	for _, s := range r.Sections {
		kinds = append(kinds, s.Kind)
	}
	if got := strings.Join(kinds, " "); got != "iocal ramp dss future_kind" {
		t.Errorf("sections %q", got)
	}
	last := r.Sections[len(r.Sections)-1]
	if len(last.Notes) == 0 || !strings.Contains(last.Notes[0], `does not know step kind "future_kind"`) {
		t.Errorf("the unknown kind is not listed: %+v", last)
	}
	if r.Sections[2].Status != results.StatusInterrupted {
		t.Errorf("the interrupted dss step is not marked: %+v", r.Sections[2].Status)
	}
	var h bytes.Buffer
	if err := r.HTML(&h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), `<div class="banner">This run is <b>interrupted</b>`) {
		t.Error("report.html of an interrupted run has no visible mark")
	}
}

// A label is text: html/template escapes it in the page, and the chart data
// (JSON in a script element) cannot close its element.
func TestHTMLEscapesEveryValue(t *testing.T) {
	var h bytes.Buffer
	if err := build(t, "oltp-xss").HTML(&h); err != nil {
		t.Fatal(err)
	}
	page := h.String()
	if strings.Contains(page, "<script>alert(1)") {
		t.Fatal("the label <script>alert(1)</script> went into the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the label is not shown")
	}
	if n := strings.Count(page, "</script>"); n != 3 {
		t.Errorf("%d script elements closed, want 3 (data, ECharts, renderer)", n)
	}
	markup := regexp.MustCompile(`(?s)(<script[^>]*>).*?</script>`).ReplaceAllString(page, "$1</script>")
	for _, ref := range []string{" src=", "<link", "<img", "@import", "url("} {
		if strings.Contains(markup, ref) {
			t.Errorf("the page refers to another file (%s): it must work offline", ref)
		}
	}
}

// report.md escapes every field it prints, those calibra words itself
// too (the status, limited_by and its rule): a results.json may come from
// elsewhere, and its text must make no HTML, no link and no reordered line
// where the report is pasted.
func TestMarkdownEscapesEveryField(t *testing.T) {
	run, err := results.Load(filepath.Join(runs, "oltp-xss"))
	if err != nil {
		t.Fatal(err)
	}
	const hostile = "<script>alert(1)</script>[click](http://evil.invalid)\u202eexe.txt"
	run.Status = hostile
	run.Meta.Label = hostile
	run.Warnings = append(run.Warnings, hostile)
	for i := range run.Steps {
		run.Steps[i].Name = hostile
		run.Steps[i].Status = hostile
		run.Steps[i].LimitedBy = hostile
		run.Steps[i].LimitedByEvidence = &results.Evidence{Rule: hostile}
	}
	var md bytes.Buffer
	if err := Build(run, nil).Markdown(&md); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	if !strings.Contains(out, "Limited by **") {
		t.Fatal("report.md says nothing of limited_by: the test checks nothing")
	}
	// A bracket makes a link unless a backslash escapes it.
	for _, raw := range []string{"<script>", `(^|[^\\])\[click`, `(^|[^\\])\]\(http`, "\u202e"} {
		re := regexp.MustCompile(raw)
		for _, line := range strings.Split(out, "\n") {
			if re.MatchString(line) {
				t.Errorf("report.md prints %q raw: %s", raw, line)
			}
		}
	}
}

func TestWriteRefusesWhatIsNotARun(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, want string
	}{
		{"no results.json", "", "holds no results.json"},
		{"broken JSON", `{"schema": "calibra.results/v1", "steps": [`, "is not valid JSON"},
		{"unknown schema", `{"schema": "calibra.results/v9"}`, `has schema "calibra.results/v9"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.MkdirAll(run, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.content != "" {
				if err := os.WriteFile(filepath.Join(run, "results.json"), []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(run)
			var in *fault.InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Write = %v, want an input error containing %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(run, "report.html")); err == nil {
				t.Error("a report was written")
			}
		})
	}
}

// Every caveat is said once, naming every step it concerns, with what to
// do; the run's own come first.
func TestCaveatsAreSaidOnce(t *testing.T) {
	checkpoint := "no checkpoint began in the timed window"
	run := &results.Run{Warnings: []string{"PostgreSQL 15 has no pg_stat_io (16+): db.client_reads not measured"},
		Meta: results.Meta{Limits: &results.AppliedLimits{NotApplied: map[string]string{"limits": "no cgroup here"}}},
		Steps: []results.Step{
			{StepHeader: results.StepHeader{Kind: "oltp", Name: "timed 1"}, Body: &results.OLTP{Warnings: []string{checkpoint}}},
			{StepHeader: results.StepHeader{Kind: "oltp", Name: "timed 2", LimitedBy: "host", LimitedByEvidence: &results.Evidence{Rule: "another load used 40%"}},
				Body: &results.OLTP{Warnings: []string{checkpoint}}},
			{StepHeader: results.StepHeader{Kind: "iocal", Name: "iocal", LimitedBy: "storage", LimitedByEvidence: &results.Evidence{Rule: "the device was busy"}},
				Body: &results.IOCal{CacheDominated: "raise --size", Warnings: []string{"seqwrite at 16 jobs was measured from 16 operations"}}},
		}}
	got := Caveats(run)
	want := []string{
		"PostgreSQL 15 has no pg_stat_io (16+): db.client_reads not measured",
		"the cache and storage limits were not applied (no cgroup here): reads may have come from the page cache; run as root on a machine with cgroups to bound it",
		"timed 1, timed 2: " + checkpoint,
		"timed 2: limited by host (another load used 40%): another load shared the machine: repeat the run on a quiet host before trusting it or comparing it",
		"iocal: cache-dominated: raise --size",
		"iocal: seqwrite at 16 jobs was measured from 16 operations",
	}
	if !slices.Equal(got, want) {
		t.Errorf("caveats:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// iocal's commit points and one-block-a-query reads have tables of their
// own, each point with what limited it.
func TestIOCalCommitAndClientReadTables(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	run := &results.Run{Steps: []results.Step{{StepHeader: results.StepHeader{Kind: results.KindIOCal, Name: "iocal"},
		Body: &results.IOCal{
			ClientRead: &results.IOCalRandom{Points: []results.IOCalPoint{{Jobs: 16, IOPS: 7200, LimitedBy: "cpu"}}},
			Commit: &results.IOCalCommit{Points: []results.IOCalPoint{{Jobs: 1, CommitsPS: 10828, LatMs: &results.IOCalLatency{Mean: 0.092, P99: 0.147},
				WALSyncsPS: f(10819), ServerSyncMs: f(0.084), DiskWAwaitMs: f(0.032), LimitedBy: "storage"}}}}}}}
	var md bytes.Buffer
	if err := Build(run, nil).Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Points, client read (one block a query)**", "| 16 | 7,200 |", "**Points, commit (committers)**", "| 1 | 10,828 | 0.092 | 0.147 | 10,819 | 0.084 | 0.032 | n/a | storage |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}

// A replay's section sets each rate of the profile beside the replay at
// 1x and at the headroom, charts each multiple's latencies against the
// SLA, and says the verdict; its card is the headroom.
func TestReplaySection(t *testing.T) {
	r := build(t, "replay-a")
	if len(r.Cards) == 0 || r.Cards[0].Name != "headroom" || r.Cards[0].Value != "2" {
		t.Fatalf("cards %+v", r.Cards)
	}
	sec := r.Sections[0]
	var rates, chart bool
	for _, b := range sec.Blocks {
		if b.Table != nil && len(b.Table.Rows) > 1 && b.Table.Rows[1][0].Text == "commits_ps" {
			rates = b.Table.Rows[1][1].Text == "911" && b.Table.Rows[1][2].Text == "1,088" && b.Table.Rows[1][5].Text == "2.47"
		}
		for _, c := range b.Charts {
			chart = chart || strings.HasPrefix(c.Title, "Read and commit latency")
		}
	}
	if !rates || !chart || !slices.ContainsFunc(sec.Notes, func(n string) bool { return strings.HasPrefix(n, "Verdict: headroom at least 2x") }) {
		t.Errorf("rates %v, latency chart %v, notes %q", rates, chart, sec.Notes)
	}
}
