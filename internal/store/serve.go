package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// The queries calibra serve needs beside History: one run as the store
// keeps it, the figures the store holds, and one figure across runs.

// StoredRun is a run as the store keeps it for calibra serve: the
// directory it was recorded from (a name only: serve never opens it) and
// its results.json and timeseries.csv as read then.
type StoredRun struct {
	Dir string
	// Results is nil for a run an older calibra recorded (schema version
	// 2 or earlier), until calibra store import records it again.
	Results []byte
	// Timeseries is nil when the run had none, or one too large to keep.
	Timeseries []byte
}

// Stored is the run id as the store keeps it; found is false when no run
// has that id.
func (s *Store) Stored(ctx context.Context, id string) (run StoredRun, found bool, err error) {
	var res, ts []byte
	err = s.db.QueryRowContext(ctx, s.d.rebind(`SELECT dir, results_gz, timeseries_gz FROM runs WHERE id = ?`), id).Scan(&run.Dir, &res, &ts)
	if errors.Is(err, sql.ErrNoRows) {
		return StoredRun{}, false, nil
	}
	if err != nil {
		return StoredRun{}, false, err
	}
	if len(res) > 0 {
		if run.Results, err = decompress(res, results.MaxResultsBytes, id+"'s results.json"); err != nil {
			return StoredRun{}, true, err
		}
	}
	if len(ts) > 0 {
		if run.Timeseries, err = decompress(ts, results.MaxTimeseriesBytes, id+"'s timeseries.csv"); err != nil {
			return StoredRun{}, true, err
		}
	}
	return run, true, nil
}

// FigureName is one figure the store holds, as --metric names it
// (Kind.Metric), with the number of runs that measured it.
type FigureName struct {
	Kind, Metric, Unit, Better string
	Runs                       int
}

// Name is KIND.METRIC.
func (f FigureName) Name() string { return f.Kind + "." + f.Metric }

// FigureNames lists every figure recorded, by kind and name.
func (s *Store) FigureNames(ctx context.Context) ([]FigureName, error) {
	// Counted on the index (kind, metric, run_id) alone, and the unit read
	// once a figure: reading every figure's row takes seconds with 10,000
	// runs.
	rows, err := s.db.QueryContext(ctx, `SELECT kind, metric, count(DISTINCT run_id),
		(SELECT unit FROM figures u WHERE u.kind = f.kind AND u.metric = f.metric LIMIT 1),
		(SELECT better FROM figures u WHERE u.kind = f.kind AND u.metric = f.metric LIMIT 1)
		FROM figures f GROUP BY kind, metric ORDER BY kind, metric`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FigureName
	for rows.Next() {
		var f FigureName
		if err := rows.Scan(&f.Kind, &f.Metric, &f.Runs, &f.Unit, &f.Better); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// TrendPoint is one run's value of a figure: the median of its steps'
// values (its repeats), their range and count.
type TrendPoint struct {
	ID, Label, Host, Storage, Device, Engine string
	StartedAt                                time.Time
	Median, Min, Max                         float64
	N                                        int
	Unit                                     string
}

// Target is what a trend follows over time: the host, the storage path
// (or device) and the engine, "host:/path engine".
func (p TrendPoint) Target() string {
	t := p.Host
	if where := cmp.Or(p.Storage, p.Device); where != "" {
		t += ":" + where
	}
	if p.Engine != "" {
		t += " " + p.Engine
	}
	return t
}

// TrendQuery selects a figure's runs for FigureTrend: the figure
// (KIND.METRIC as Kind and Metric), labels matching the glob Label ("" for
// all), and runs started at Since or later (zero for all).
type TrendQuery struct {
	Kind, Metric, Label string
	Since               time.Time
}

// FigureTrend lists the runs that measured the figure q names, oldest
// first. One join, not History's queries by run id: the page follows a
// figure across every run.
func (s *Store) FigureTrend(ctx context.Context, tq TrendQuery) ([]TrendPoint, error) {
	q := `SELECT r.id, r.label, r.host, r.storage_path, r.storage_device, r.engine_name, r.started_at, f.value, f.unit
		FROM figures f JOIN runs r ON r.id = f.run_id WHERE f.kind = ? AND f.metric = ?`
	args := []any{tq.Kind, tq.Metric}
	if tq.Label != "" {
		cond, arg := s.d.glob("r.label", tq.Label)
		q, args = q+" AND "+cond, append(args, arg)
	}
	if !tq.Since.IsZero() {
		q, args = q+" AND r.started_at >= ?", append(args, formatTime(tq.Since))
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q+` ORDER BY r.started_at, r.id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TrendPoint
	var values [][]float64
	for rows.Next() {
		var p TrendPoint
		var started string
		var v float64
		if err := rows.Scan(&p.ID, &p.Label, &p.Host, &p.Storage, &p.Device, &p.Engine, &started, &v, &p.Unit); err != nil {
			return nil, err
		}
		if n := len(out); n > 0 && out[n-1].ID == p.ID {
			values[n-1] = append(values[n-1], v)
			continue
		}
		p.StartedAt, _ = time.Parse(timeFormat, started)
		out, values = append(out, p), append(values, []float64{v})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, vs := range values {
		a := aggregate(vs, out[i].Unit)
		out[i].Median, out[i].Min, out[i].Max, out[i].N = a.Value, a.Min, a.Max, a.N
	}
	return out, nil
}

// Verdict kinds calibra run --baseline records: one row for the run's
// verdict against its baseline, one for each figure judged.
const (
	verdictBaseline       = "baseline"
	verdictBaselineFigure = "baseline_figure"
)

// RegressionVerdict is a run judged against its baseline: the verdict
// ("regressed", "host busy", "pass" or "no verdict"), its sentence, its
// figures and its baseline's runs.
type RegressionVerdict struct {
	ID, Label, Verdict, Detail string
	StartedAt                  time.Time
	Figures                    []RegressionFigure
	// Baseline is the runs it was judged against and its acceptance.
	Baseline *RunBaseline
}

// RegressionFigure is one figure judged against the baseline: its
// verdict, its change in percent (nil when the base is zero) and its
// sentence; Regressed when it failed the run.
type RegressionFigure struct {
	Step, Verdict, Detail string
	DeltaPct              *float64
	Regressed             bool
}

// Regressions lists the runs judged against a baseline, newest first,
// only those that regressed unless all; at most limit runs (0: all).
func (s *Store) Regressions(ctx context.Context, all bool, limit int) ([]RegressionVerdict, error) {
	q := `SELECT r.id, r.label, r.started_at, v.verdict, v.detail FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE v.kind = ?`
	args := []any{verdictBaseline}
	if !all {
		q, args = q+` AND v.verdict = ?`, append(args, results.BaselineRegressed)
	}
	q += ` ORDER BY r.started_at DESC, r.id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	var out []RegressionVerdict
	for rows.Next() {
		var v RegressionVerdict
		var started string
		if err := rows.Scan(&v.ID, &v.Label, &started, &v.Verdict, &v.Detail); err != nil {
			rows.Close()
			return nil, err
		}
		v.StartedAt, _ = time.Parse(timeFormat, started)
		out = append(out, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rowsOf := make([]Row, len(out))
	for i := range out {
		if out[i].Figures, err = s.regressionFigures(ctx, out[i].ID); err != nil {
			return nil, err
		}
		rowsOf[i].ID = out[i].ID
	}
	if err := s.baselines(ctx, rowsOf); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Baseline = rowsOf[i].Baseline
	}
	return out, nil
}

func (s *Store) regressionFigures(ctx context.Context, id string) ([]RegressionFigure, error) {
	// rowid: the order the figures were judged in (PostgreSQL's verdicts
	// have the column from schema version 2).
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT step, verdict, detail, value, ok FROM verdicts WHERE run_id = ? AND kind = ? ORDER BY rowid`), id, verdictBaselineFigure)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RegressionFigure
	for rows.Next() {
		var f RegressionFigure
		var delta sql.NullFloat64
		var ok sql.NullBool
		if err := rows.Scan(&f.Step, &f.Verdict, &f.Detail, &delta, &ok); err != nil {
			return nil, err
		}
		if delta.Valid {
			f.DeltaPct = &delta.Float64
		}
		f.Regressed = ok.Valid && !ok.Bool
		out = append(out, f)
	}
	return out, rows.Err()
}
