package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// The queries of calibra serve's dashboard: a page of the list and its
// count, the filters' choices, each target's newest run with its verdict,
// and a figure's trend a day at a time.

// Matching counts the runs q selects, its Limit and Offset aside.
func (s *Store) Matching(ctx context.Context, q Query) (int, error) {
	cond, args := s.where(q)
	var n int
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT count(*) FROM runs WHERE `+cond), args...).Scan(&n)
	return n, err
}

// Choices are the values the list's filters offer: every engine, status
// and host recorded, sorted.
type Choices struct {
	Engines, Statuses, Hosts []string
}

// Choices reads the engines, statuses and hosts of every run.
func (s *Store) Choices(ctx context.Context) (Choices, error) {
	var c Choices
	for _, x := range []struct {
		col string
		out *[]string
	}{{"engine_name", &c.Engines}, {"status", &c.Statuses}, {"host", &c.Hosts}} {
		rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT `+x.col+` FROM runs WHERE `+x.col+` <> '' ORDER BY `+x.col)
		if err != nil {
			return c, err
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return c, err
			}
			*x.out = append(*x.out, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Latest is a target's newest run, with its verdict against its baseline
// ("" when it was not judged: run without --baseline, or still running).
type Latest struct {
	Row
	Verdict, VerdictDetail string
}

// Latest lists the newest run of every target (host, storage path or
// device, engine), newest first.
func (s *Store) Latest(ctx context.Context) ([]Latest, error) {
	// The storage is its path, or its device when it has none (as
	// TrendPoint.Target names it): a lab's loop device changes every run.
	rows, err := s.db.QueryContext(ctx, `SELECT r.id FROM runs r JOIN (SELECT host, storage_path,
		CASE WHEN storage_path = '' THEN storage_device ELSE '' END AS device, engine_name, max(started_at) AS newest
		FROM runs GROUP BY 1, 2, 3, 4) t ON r.host = t.host AND r.storage_path = t.storage_path
		AND (t.storage_path <> '' OR r.storage_device = t.device) AND r.engine_name = t.engine_name AND r.started_at = t.newest`)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	runs, err := s.History(ctx, Query{IDs: ids})
	if err != nil {
		return nil, err
	}
	out := make([]Latest, len(runs))
	for i, r := range runs {
		out[i].Row = r
	}
	var verdict, detail string
	err = s.byID(ctx, runs, `SELECT run_id, verdict, detail FROM verdicts WHERE kind = ? AND run_id IN ids`, []any{verdictBaseline},
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &verdict, &detail) },
		func(i int) { out[i].Verdict, out[i].VerdictDetail = verdict, detail })
	return out, err
}

// Regressed are the runs judged regressed against their baseline, by id.
func (s *Store) Regressed(ctx context.Context) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT run_id FROM verdicts WHERE kind = ? AND verdict = ?`), verdictBaseline, results.BaselineRegressed)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// DayPoint is a target's figure over one UTC day: the median of its runs'
// values (each a run's median over its repeats), their range, and Runs;
// Last is the day's newest run, and Regressed counts the day's runs
// judged regressed.
type DayPoint struct {
	Target           string
	Day              time.Time
	Median, Min, Max float64
	Runs, Regressed  int
	Last             string
}

// PerDay aggregates a trend's points (oldest first, as FigureTrend gives
// them) per target and UTC day, oldest first;
// regressed says which runs regressed.
func PerDay(points []TrendPoint, regressed map[string]bool) []DayPoint {
	type key struct {
		target string
		day    time.Time
	}
	at := map[key]int{}
	var out []DayPoint
	var values [][]float64
	for _, p := range points {
		k := key{p.Target(), p.StartedAt.UTC().Truncate(24 * time.Hour)}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out, values = append(out, DayPoint{Target: k.target, Day: k.day}), append(values, nil)
		}
		values[i] = append(values[i], p.Median)
		out[i].Last = p.ID
		if regressed[p.ID] {
			out[i].Regressed++
		}
	}
	for i, vs := range values {
		a := aggregate(vs, "")
		out[i].Median, out[i].Min, out[i].Max, out[i].Runs = a.Value, a.Min, a.Max, a.N
	}
	return out
}
