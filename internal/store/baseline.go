package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/results"
)

// Target is what makes stored runs a baseline for a run: the same host,
// engine, storage under test, command and study. A lab tier (--lab) built
// under a path is that path's storage, another tier of it, as a firmware
// update or a cache turned off would be: judged against the path's
// earlier runs it is the regression it would be on real storage.
type Target struct {
	Host    string
	Engine  string // the engine's name, "" for a command without one
	Storage string // the storage path (or block device) under test
	Command string // "run", "device", "oltp run"...
	Study   string // the study's name or preset, "" for a command
}

// TargetOf is the target of a run, from its results.json.
func TargetOf(r *results.Run) Target {
	t := Target{Host: r.Meta.Host.Hostname, Storage: lab.BuiltUnder(r.Meta.Storage.Path), Command: r.Meta.Command, Study: studyName(r.Meta.Study)}
	if e := r.Meta.Engine; e != nil {
		t.Engine = e.Name
	}
	return t
}

// String is the target in words, for the run's record and the sentence
// that says no run matched.
func (t Target) String() string {
	s := "calibra " + t.Command
	if t.Study != "" {
		s += " (study " + t.Study + ")"
	}
	if t.Engine != "" {
		s += " on " + t.Engine
	}
	return s + " at " + t.Storage + " on host " + t.Host
}

// BaselineQuery selects the stored runs a run is judged against.
type BaselineQuery struct {
	Target Target
	// Label selects the runs of that label; "" the most recent runs of
	// any label that started before Before (--baseline last).
	Label  string
	Before time.Time
	// Exclude is the judged run's own id, when it is recorded already.
	Exclude string
	Limit   int // at most this many runs, newest first
}

// BaselineRun is a stored run of a baseline.
type BaselineRun struct {
	ID, Label string
	StartedAt time.Time
}

// FigureKey names a figure across runs: the step as compare names it
// (kind/name) and the metric.
type FigureKey struct{ Step, Metric string }

// Baseline returns the complete runs of q's target that q selects, newest
// first, and every value of their figures (each repeat of each run).
func (s *Store) Baseline(ctx context.Context, q BaselineQuery) ([]BaselineRun, map[FigureKey][]float64, error) {
	t := q.Target
	where := []string{"status = ?", "host = ?", "engine_name = ?", "(storage_path = ? OR storage_path = ?)", "command = ?", "study = ?", "id <> ?"}
	args := []any{results.StatusComplete, t.Host, t.Engine, t.Storage, lab.MountUnder(t.Storage), t.Command, t.Study, q.Exclude}
	if q.Label != "" {
		where, args = append(where, "label = ?"), append(args, q.Label)
	} else {
		where, args = append(where, "started_at < ?"), append(args, formatTime(q.Before))
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT id, label, started_at FROM runs WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY started_at DESC, id DESC LIMIT %d`, max(q.Limit, 1))), args...)
	if err != nil {
		return nil, nil, err
	}
	var runs []BaselineRun
	for rows.Next() {
		var r BaselineRun
		var started string
		if err := rows.Scan(&r.ID, &r.Label, &started); err != nil {
			rows.Close()
			return nil, nil, err
		}
		r.StartedAt, _ = time.Parse(timeFormat, started)
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	values := map[FigureKey][]float64{}
	for _, r := range runs {
		if err := s.figureValues(ctx, r.ID, values); err != nil {
			return nil, nil, err
		}
	}
	return runs, values, nil
}

// figureValues adds a run's figures to values.
func (s *Store) figureValues(ctx context.Context, id string, values map[FigureKey][]float64) error {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT step, metric, value FROM figures WHERE run_id = ? ORDER BY step_index`), id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k FigureKey
		var v float64
		if err := rows.Scan(&k.Step, &k.Metric, &v); err != nil {
			return err
		}
		values[k] = append(values[k], v)
	}
	return rows.Err()
}

// writeBaseline records the run's verdict against its baseline, when it
// has one: a row of kind "baseline" for the whole (its verdict, ok unless
// it regressed, the reason) and one of kind "baseline_figure" per figure
// (its verdict, ok unless it regressed, the change in percent).
func (w *writer) writeBaseline(ctx context.Context, rec record) error {
	b := rec.run.Baseline
	if b == nil {
		return nil
	}
	detail := strings.TrimSpace(fmt.Sprintf("against %s (%d runs): %s", b.Spec, len(b.Runs), b.Reason))
	if _, err := w.verdict.ExecContext(ctx, rec.id, nil, "", verdictBaseline, b.Verdict, nullOK(b.Verdict != results.BaselineNone, !b.Regressed), nil, detail); err != nil {
		return err
	}
	for _, f := range b.Figures {
		p := ""
		if f.P != nil {
			p = fmt.Sprintf(", p=%.3g", *f.P)
		}
		detail := fmt.Sprintf("%s.%s: median %s against %s (n=%d against %d%s)", strings.SplitN(f.Step, "/", 2)[0], f.Metric,
			results.Num(f.RunMedian), results.Num(f.BaseMedian), f.RunN, f.BaseN, p)
		var delta any
		if f.DeltaPct != nil {
			delta = *f.DeltaPct
		}
		if _, err := w.verdict.ExecContext(ctx, rec.id, nil, f.Step, verdictBaselineFigure, f.Verdict, nullOK(f.P != nil, !f.Regressed), delta, detail); err != nil {
			return err
		}
	}
	return nil
}

// nullOK is a verdict's ok column, 1 or 0 as for thresholds (PostgreSQL's
// INTEGER takes no boolean): NULL when nothing was judged.
func nullOK(judged, ok bool) any {
	switch {
	case !judged:
		return nil
	case ok:
		return 1
	}
	return 0
}
