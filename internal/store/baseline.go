package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
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

// BaselineRun is a stored run of a baseline, with its results.json as the
// store keeps it.
type BaselineRun struct {
	ID, Label string
	StartedAt time.Time
	Results   []byte
}

// FigureKey names a figure across runs: the step as compare names it
// (kind/name) and the metric.
type FigureKey struct{ Step, Metric string }

// Picked is what Baseline found: the runs, the runs that regressed or ran
// on a busy host passed over on the way (LeftOut), and how many runs it skipped on the way for want
// of the store's copy of their results.json (recorded before schema 3).
type Picked struct {
	Runs    []BaselineRun
	LeftOut []string
	NoCopy  int
}

// Baseline returns the good runs of q's target that q selects, newest
// first: complete, with the store's copy of their results.json, and
// neither regressed against their own baseline nor judged on a busy host
// (whose figures are the host's) unless a person accepted them (Accept).
func (s *Store) Baseline(ctx context.Context, q BaselineQuery) (Picked, error) {
	var p Picked
	t := q.Target
	where := []string{"status = ?", "host = ?", "engine_name = ?", "(storage_path = ? OR storage_path = ?)", "command = ?", "study = ?", "id <> ?"}
	args := []any{results.StatusComplete, t.Host, t.Engine, t.Storage, lab.MountUnder(t.Storage), t.Command, t.Study, q.Exclude}
	if q.Label != "" {
		where, args = append(where, "label = ?"), append(args, q.Label)
	} else {
		where, args = append(where, "started_at < ?"), append(args, formatTime(q.Before))
	}
	// Newest first until enough good runs: the regressed ones met on the
	// way are named, not taken.
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT id, label, started_at, results_gz,
		CASE WHEN EXISTS (SELECT 1 FROM verdicts v WHERE v.run_id = runs.id AND v.kind = 'baseline' AND v.ok = 0)
		AND NOT EXISTS (SELECT 1 FROM accepted a WHERE a.run_id = runs.id) THEN 1 ELSE 0 END
		FROM runs WHERE `+strings.Join(where, " AND ")+` ORDER BY started_at DESC, id DESC`), args...)
	if err != nil {
		return p, s.Explain(err)
	}
	defer rows.Close()
	for len(p.Runs) < max(q.Limit, 1) && rows.Next() {
		var r BaselineRun
		var started string
		var gz []byte
		var regressed int
		if err := rows.Scan(&r.ID, &r.Label, &started, &gz, &regressed); err != nil {
			return p, s.Explain(err)
		}
		switch {
		case regressed == 1:
			p.LeftOut = append(p.LeftOut, r.ID)
			continue
		case gz == nil:
			p.NoCopy++
			continue
		}
		r.StartedAt, _ = time.Parse(timeFormat, started)
		if r.Results, err = decompress(gz, results.MaxResultsBytes, r.ID+"'s results.json"); err != nil {
			return p, err
		}
		p.Runs = append(p.Runs, r)
	}
	return p, s.Explain(rows.Err())
}

// Accept takes run id, which regressed against its baseline or ran on a
// busy host, into later baselines: a person's decision (by whom, when)
// that its figures are the new normal.
func (s *Store) Accept(ctx context.Context, id, by string, at time.Time) error {
	var verdict string
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT coalesce((SELECT max(verdict) FROM verdicts v WHERE v.run_id = runs.id AND v.kind = 'baseline'), '')
		FROM runs WHERE id = ?`), id).Scan(&verdict)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fault.Input("give a run id as calibra history --format csv lists it, or the run's directory", "the results store %s holds no run %s", s.Where, id)
	case err != nil:
		return s.Explain(err)
	case verdict != results.BaselineRegressed && verdict != results.BaselineHostBusy:
		return fault.Input("accept only a run that regressed or ran on a busy host: the others are in baselines already", "run %s did not regress against its baseline", id)
	}
	_, err = s.db.ExecContext(ctx, s.d.rebind(`INSERT INTO accepted (run_id, accepted_by, accepted_at) VALUES (?, ?, ?)
		ON CONFLICT (run_id) DO UPDATE SET accepted_by = excluded.accepted_by, accepted_at = excluded.accepted_at`), id, by, formatTime(at))
	return s.Explain(err)
}

// writeBaseline records the run's verdict against its baseline, when it
// has one: a row of kind "baseline" for the whole (its verdict, ok unless
// it regressed or the host was too busy to judge it, the reason) and one of kind "baseline_figure" per figure
// (its verdict, ok unless it regressed, the change in percent).
func (w *writer) writeBaseline(ctx context.Context, rec record) error {
	b := rec.run.Baseline
	if b == nil {
		return nil
	}
	detail := strings.TrimSpace(fmt.Sprintf("against %s (%d runs): %s", b.Spec, len(b.Runs), b.Reason))
	if _, err := w.verdict.ExecContext(ctx, rec.id, nil, "", verdictBaseline, b.Verdict, nullOK(b.Verdict != results.BaselineNone, !b.Regressed && b.Verdict != results.BaselineHostBusy), nil, detail); err != nil {
		return err
	}
	for i, id := range b.Runs {
		if _, err := w.baseRun.ExecContext(ctx, rec.id, i, id); err != nil {
			return err
		}
	}
	for _, f := range b.Figures {
		p := ""
		if f.PHolm != nil {
			p = fmt.Sprintf(", p=%.3g Holm-adjusted", *f.PHolm)
		}
		detail := fmt.Sprintf("%s.%s: median %s against %s (n=%d against %d%s)", strings.SplitN(f.Step, "/", 2)[0], f.Metric,
			results.Num(f.RunMedian), results.Num(f.BaseMedian), f.RunN, f.BaseN, p)
		var delta any
		if f.DeltaPct != nil {
			delta = *f.DeltaPct
		}
		if _, err := w.verdict.ExecContext(ctx, rec.id, nil, f.Step, verdictBaselineFigure, f.Verdict, nullOK(f.PHolm != nil, !f.Regressed), delta, detail); err != nil {
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
