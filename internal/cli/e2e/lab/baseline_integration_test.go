//go:build integration

package lab

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // to read the store's verdicts as another tool would

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// baselineStudy is a device study of one point, small and short: the
// regression is the tier's, not the study's.
const baselineStudy = `version: 1
name: ci-device
steps:
  - kind: device
    specs: 4k-randread
    qd: "1"
    ramp: 0s
    runtime: 1s
    size: 16MiB
    max_latency: 1s
    repeat: 2
`

// A real regression: three runs of a device study on a plain path are
// recorded in a store; the same study on the lab's hdd tier built under
// that path (the same target, another tier of its storage) with three
// repeats, judged against the last three runs, exits 3 with the verdict
// in results.json, the store and the report. With two repeats there is
// no verdict, said in a sentence, and the exit is 0.
func TestBaselineOnASlowerTier(t *testing.T) {
	t.Parallel()
	clitest.RequireFio(t)
	clitest.RequireLab(t)
	dir := clitest.StorageDir(t)
	defer clitest.Run(t, "clean", "--path", dir)
	work := t.TempDir()
	studyFile := filepath.Join(work, "study.yaml")
	if err := os.WriteFile(studyFile, []byte(baselineStudy), 0o644); err != nil {
		t.Fatal(err)
	}
	dbFile := filepath.Join(work, "store", "results.db")
	run := func(want int, out string, args ...string) *results.Run {
		t.Helper()
		out = filepath.Join(work, out)
		args = append([]string{"run", "--study", studyFile, "--path", dir, "--label", "nightly", "--store", "sqlite:" + dbFile,
			"--out", out, "--progress", "none"}, args...)
		code, _, stderr := clitest.Run(t, args...)
		if code != want {
			t.Fatalf("calibra %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, stderr)
		}
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, out := range []string{"fast-1", "fast-2", "fast-3"} {
		run(0, out)
	}
	// The store remembers them, each with its headline figure: the
	// median of its two repeats.
	var rows []store.Row
	code, stdout, stderr := clitest.Run(t, "history", "--json", "--label", "nightly", "--store", "sqlite:"+dbFile)
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("history --json: %d runs (%v):\n%s", len(rows), err, stdout)
	}
	for _, row := range rows {
		if len(row.Headline) == 0 || row.Headline[0].Value.Value <= 0 || row.Headline[0].N != 2 {
			t.Errorf("run %s in the history: headline %+v, want the IOPS of two repeats", row.Dir, row.Headline)
		}
	}

	r := run(3, "hdd", "--lab", "hdd", "--set", "device.repeat=3", "--baseline", "last")
	clitest.NoLabLeft(t, dir)
	b := r.Baseline
	if b == nil || !b.Regressed || b.Verdict != results.BaselineRegressed || len(b.Runs) != 3 || len(b.Figures) != 1 {
		t.Fatalf("baseline %+v", b)
	}
	f := b.Figures[0]
	t.Logf("%s: %.0f against %.0f (%+.1f%%, p=%.3f)", f.Title, f.RunMedian, f.BaseMedian, *f.DeltaPct, *f.P)
	if f.Metric != "4k-randread.iops_at_max_latency" || f.RunN != 3 || f.BaseN != 6 || *f.DeltaPct > -5 || *f.P >= 0.05 || !f.Regressed {
		t.Errorf("figure %+v", f)
	}
	md, err := os.ReadFile(filepath.Join(work, "hdd", "report.md"))
	if err != nil || !strings.Contains(string(md), "Against the baseline last (3 stored runs): regressed: 4k random read IOPS") {
		t.Errorf("report.md lacks the verdict (%v)", err)
	}
	db, err := sql.Open("sqlite", dbFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE r.dir = ? AND v.kind = 'baseline' AND v.verdict = 'regressed' AND v.ok = 0`,
		filepath.Join(work, "hdd")).Scan(&n); err != nil || n != 1 {
		t.Errorf("the store holds %d regressed baseline verdicts of the run (%v)", n, err)
	}

	r = run(0, "hdd-2", "--lab", "hdd", "--baseline", "nightly")
	if b := r.Baseline; b == nil || b.Verdict != results.BaselineNone || !strings.Contains(b.Reason, "the run has 2 values of each figure") || b.Regressed {
		t.Errorf("with 2 repeats: baseline %+v", b)
	}
}
