package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A trend follows a target: the host, the storage path (else the
// device) and the engine.
func TestTrendPointTarget(t *testing.T) {
	for _, c := range []struct {
		p    TrendPoint
		want string
	}{
		{TrendPoint{Host: "vm", Storage: "/mnt/array", Device: "/dev/sdb", Engine: "postgresql"}, "vm:/mnt/array postgresql"},
		{TrendPoint{Host: "vm", Device: "/dev/sdb"}, "vm:/dev/sdb"},
		{TrendPoint{Host: "vm"}, "vm"},
	} {
		if got := c.p.Target(); got != c.want {
			t.Errorf("%+v: target %q, want %q", c.p, got, c.want)
		}
	}
}

// Stored gives a recorded run's results.json as it was recorded, and
// says when there is no such run; FigureNames counts the runs that measured each figure, a
// run's repeats once.
func TestServeQueries(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	dir := copyRun(t, t.TempDir(), "repeats-a")
	id, err := s.Record(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, copyRun(t, t.TempDir(), "repeats-b")); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Kept as recorded: the directory changing or going later changes
	// nothing the store gives serve.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if got, found, err := s.Stored(ctx, id); err != nil || !found || got.Dir != dir || !bytes.Equal(got.Results, want) {
		t.Errorf("Stored(%s) = %q with %d bytes of results.json, %v, %v; want %s with its %d bytes", id, got.Dir, len(got.Results), found, err, dir, len(want))
	}
	if _, found, err := s.Stored(ctx, "nosuchrun"); err != nil || found {
		t.Errorf("Stored of no run: found %v, %v", found, err)
	}
	figs, err := s.FigureNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var nopm *FigureName
	for i := range figs {
		if figs[i].Name() == "oltp.nopm" {
			nopm = &figs[i]
		}
	}
	if nopm == nil || nopm.Runs != 2 || nopm.Better != "higher" {
		t.Errorf("oltp.nopm among the figures: %+v, want 2 runs (each with its repeats), higher is better", nopm)
	}
}

// Regressions lists the runs judged against a baseline (the verdict rows
// calibra run --baseline writes), the regressed ones unless all, each
// with its figures.
func TestRegressions(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	var ids []string
	for _, name := range []string{"oltp-base", "repeats-a"} {
		id, err := s.Record(ctx, copyRun(t, t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, v := range []struct {
		id, kind, step, verdict string
		ok                      any
		value                   any
	}{
		{ids[0], "baseline", "", "pass", true, nil},
		{ids[1], "baseline", "", "regressed", false, nil},
		{ids[1], "baseline_figure", "oltp/oltp 1", "regressed", false, -12.5},
		{ids[1], "baseline_figure", "oltp/oltp 1", "~", nil, nil},
	} {
		if _, err := s.db.Exec(`INSERT INTO verdicts (run_id, step, kind, verdict, ok, value, detail) VALUES (?, ?, ?, ?, ?, ?, 'why')`, v.id, v.step, v.kind, v.verdict, v.ok, v.value); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Regressions(ctx, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != ids[1] || got[0].Verdict != "regressed" || len(got[0].Figures) != 2 {
		t.Fatalf("Regressions: %+v, want repeats-a's with its two figures", got)
	}
	if f := got[0].Figures; !f[0].Regressed || f[0].DeltaPct == nil || *f[0].DeltaPct != -12.5 || f[1].Regressed || f[1].DeltaPct != nil {
		t.Errorf("the figures: %+v", f)
	}
	if all, err := s.Regressions(ctx, true, 0); err != nil || len(all) != 2 {
		t.Errorf("every verdict: %d runs, %v; want 2", len(all), err)
	}
}
