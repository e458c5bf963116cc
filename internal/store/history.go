package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// Query selects runs for History and Trend. Its zero value selects every
// run; each field set narrows the selection.
type Query struct {
	Label  string // a glob (* ? [...]), "" for every label
	Metric string // KIND.METRIC, "" for none: then only runs that have it
	Limit  int    // at most this many runs, newest first; 0 for all

	Engine  string    // the engine's name (postgresql, mariadb), exactly
	Storage string    // a glob the storage path or its device matches
	Study   string    // a glob the study's name or preset matches
	Status  string    // complete, failed, interrupted...
	Since   time.Time // runs started at or after it, when set
	Until   time.Time // runs started before it, when set

	IDs    []string // these runs, by id
	Host   string   // a glob the host's name matches
	Offset int      // skip this many runs first (a page of the list)
	// Order is a column of OrderColumns, "-" first for descending; ""
	// is newest first. Ties go newest first.
	Order string
}

// OrderColumns are the columns History sorts by (Query.Order), by the
// names calibra serve's list gives them.
var OrderColumns = map[string]string{"started": "started_at", "label": "label", "status": "status", "engine": "engine_name",
	"host": "host", "storage": "storage_path", "study": "study", "figures": "figure_count"}

// order is q's ORDER BY; an unknown column sorts newest first.
func (q Query) order() string {
	col, ok := OrderColumns[strings.TrimPrefix(q.Order, "-")]
	if !ok {
		return "started_at DESC, id DESC"
	}
	dir := " ASC"
	if strings.HasPrefix(q.Order, "-") {
		dir = " DESC"
	}
	return col + dir + ", started_at DESC, id DESC"
}

// Value is a metric's value in one run: the median of its steps' values
// when the run measured it more than once (repeats), with their count and
// range.
type Value struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	N     int     `json:"n"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// Figure is a named Value: a run's headline figure. Missed counts the
// repeats with no point that met the figure's Bound (then N counts only
// those that did, and may be 0).
type Figure struct {
	Name string `json:"name"` // KIND.METRIC
	Value
	Missed int    `json:"missed,omitempty"`
	Bound  string `json:"bound,omitempty"`
}

// RunBaseline is a run's verdict against its baseline: the runs it was
// judged against, and who accepted it into later baselines, if anyone.
type RunBaseline struct {
	Verdict    string    `json:"verdict"`
	Runs       []string  `json:"runs"`
	AcceptedBy string    `json:"accepted_by,omitempty"`
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
}

// Row is one run in the history.
type Row struct {
	ID            string    `json:"id"`
	StartedAt     time.Time `json:"started_at"`
	Label         string    `json:"label"`
	Status        string    `json:"status"`
	Command       string    `json:"command"`
	Engine        string    `json:"engine,omitempty"`
	EngineVersion string    `json:"engine_version,omitempty"`
	Host          string    `json:"host"`
	Storage       string    `json:"storage,omitempty"`
	Device        string    `json:"device,omitempty"`
	Study         string    `json:"study,omitempty"`
	Dir           string    `json:"dir"`
	Figures       int       `json:"figures"`
	Metric        *Value    `json:"metric,omitempty"`
	// Headline is each kind of step's first figure (oltp.nopm, a device's
	// first spec's IOPS...), repeats aggregated.
	Headline []Figure `json:"headline,omitempty"`
	// Thresholds judged, and how many of them failed.
	Thresholds int `json:"thresholds"`
	Failed     int `json:"thresholds_failed"`
	// Baseline is the run's verdict against its baseline, when judged.
	Baseline *RunBaseline `json:"baseline,omitempty"`
}

// where is q's condition on runs and its arguments.
func (s *Store) where(q Query) (string, []any) {
	conds, args := []string{"1 = 1"}, []any{}
	add := func(cond string, arg ...any) { conds, args = append(conds, cond), append(args, arg...) }
	if q.Label != "" {
		add(s.d.glob("runs.label", q.Label))
	}
	if q.Storage != "" {
		p, a := s.d.glob("runs.storage_path", q.Storage)
		d, _ := s.d.glob("runs.storage_device", q.Storage)
		add("("+p+" OR "+d+")", a, a)
	}
	if q.Study != "" {
		add(s.d.glob("runs.study", q.Study))
	}
	if q.Engine != "" {
		add("runs.engine_name = ?", q.Engine)
	}
	if q.Status != "" {
		add("runs.status = ?", q.Status)
	}
	if len(q.IDs) > 0 {
		ids := make([]any, len(q.IDs))
		for i, id := range q.IDs {
			ids[i] = id
		}
		add("runs.id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", ids...)
	}
	if q.Host != "" {
		add(s.d.glob("runs.host", q.Host))
	}
	if !q.Since.IsZero() {
		add("runs.started_at >= ?", formatTime(q.Since))
	}
	if !q.Until.IsZero() {
		add("runs.started_at < ?", formatTime(q.Until))
	}
	if q.Metric != "" {
		kind, name, _ := strings.Cut(q.Metric, ".")
		add("EXISTS (SELECT 1 FROM figures f WHERE f.run_id = runs.id AND f.kind = ? AND f.metric = ?)", kind, name)
	}
	return strings.Join(conds, " AND "), args
}

// History lists recorded runs, newest first.
func (s *Store) History(ctx context.Context, q Query) ([]Row, error) {
	cond, args := s.where(q)
	text := `SELECT id, started_at, label, status, command, engine_name, engine_version, host, storage_path, storage_device,
		study, dir, figure_count, headline FROM runs WHERE ` + cond + ` ORDER BY ` + q.order()
	if q.Limit > 0 || q.Offset > 0 {
		text += fmt.Sprintf(" LIMIT %d OFFSET %d", cmp.Or(q.Limit, math.MaxInt32), q.Offset)
	}
	rows, err := s.db.QueryContext(ctx, s.d.rebind(text), args...)
	if err != nil {
		return nil, err
	}
	var out []Row
	for rows.Next() {
		var r Row
		var started, headline string
		if err := rows.Scan(&r.ID, &started, &r.Label, &r.Status, &r.Command, &r.Engine, &r.EngineVersion, &r.Host, &r.Storage, &r.Device,
			&r.Study, &r.Dir, &r.Figures, &headline); err != nil {
			rows.Close()
			return nil, err
		}
		r.StartedAt, _ = time.Parse(timeFormat, started)
		_ = json.Unmarshal([]byte(headline), &r.Headline) // a version-1 record has none
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	if err := s.thresholds(ctx, out); err != nil {
		return nil, err
	}
	if err := s.baselines(ctx, out); err != nil {
		return nil, err
	}
	if q.Metric == "" {
		return out, nil
	}
	return out, s.values(ctx, q.Metric, out)
}

// byID runs query, whose "IN ids" it fills with the rows' ids, a few
// hundred at a time (an index lookup each, however many runs the store
// holds), with args before the ids; scan reads each result row and
// returns the run id it is about, and set is called with the row's place.
func (s *Store) byID(ctx context.Context, out []Row, query string, args []any, scan func(*sql.Rows) (string, error), set func(i int)) error {
	const chunk = 500
	at := make(map[string]int, len(out))
	for i, r := range out {
		at[r.ID] = i
	}
	for lo := 0; lo < len(out); lo += chunk {
		part := out[lo:min(lo+chunk, len(out))]
		all := append([]any(nil), args...)
		for _, r := range part {
			all = append(all, r.ID)
		}
		ids := "IN (?" + strings.Repeat(", ?", len(part)-1) + ")"
		rows, err := s.db.QueryContext(ctx, s.d.rebind(strings.Replace(query, "IN ids", ids, 1)), all...)
		if err != nil {
			return err
		}
		for rows.Next() {
			id, err := scan(rows)
			if err != nil {
				rows.Close()
				return err
			}
			set(at[id])
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// thresholds counts the rows' thresholds judged and failed.
func (s *Store) thresholds(ctx context.Context, out []Row) error {
	var n, failed int
	return s.byID(ctx, out, `SELECT run_id, count(*), sum(1 - ok) FROM verdicts WHERE kind = 'threshold' AND run_id IN ids GROUP BY run_id`, nil,
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &n, &failed) },
		func(i int) { out[i].Thresholds, out[i].Failed = n, failed })
}

// baselines sets each judged row's Baseline: its verdict, the runs it was
// judged against, in their order, and its acceptance.
func (s *Store) baselines(ctx context.Context, out []Row) error {
	var verdict string
	err := s.byID(ctx, out, `SELECT run_id, verdict FROM verdicts WHERE kind = 'baseline' AND run_id IN ids`, nil,
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &verdict) },
		func(i int) { out[i].Baseline = &RunBaseline{Verdict: verdict, Runs: []string{}} })
	if err != nil {
		return err
	}
	var base string
	err = s.byID(ctx, out, `SELECT run_id, base_id FROM baseline_runs WHERE run_id IN ids ORDER BY run_id, position`, nil,
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &base) },
		func(i int) {
			if b := out[i].Baseline; b != nil {
				b.Runs = append(b.Runs, base)
			}
		})
	if err != nil {
		return err
	}
	var by, at string
	return s.byID(ctx, out, `SELECT run_id, accepted_by, accepted_at FROM accepted WHERE run_id IN ids`, nil,
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &by, &at) },
		func(i int) {
			if b := out[i].Baseline; b != nil {
				b.AcceptedBy = by
				b.AcceptedAt, _ = time.Parse(timeFormat, at)
			}
		})
}

// values sets each row's Metric: the median of the run's values of metric
// (KIND.METRIC), with their range and count.
func (s *Store) values(ctx context.Context, metric string, out []Row) error {
	kind, name, _ := strings.Cut(metric, ".")
	vals := make([][]float64, len(out))
	units := make([]string, len(out))
	var v float64
	var unit string
	err := s.byID(ctx, out, `SELECT run_id, value, unit FROM figures WHERE kind = ? AND metric = ? AND run_id IN ids`, []any{kind, name},
		func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id, &v, &unit) },
		func(i int) { vals[i], units[i] = append(vals[i], v), unit })
	if err != nil {
		return err
	}
	for i, vs := range vals {
		if len(vs) > 0 {
			a := aggregate(vs, units[i])
			out[i].Metric = &a
		}
	}
	return nil
}

// aggregate is the median, range and count of a run's values of one figure.
func aggregate(vs []float64, unit string) Value {
	vs = append([]float64(nil), vs...)
	sort.Float64s(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return Value{Value: m, Unit: unit, N: len(vs), Min: vs[0], Max: vs[len(vs)-1]}
}

// HeadlineRule is the rule headlineOf follows; a run whose stored
// headline an older rule made is rebuilt (rebuildHeadlines).
const HeadlineRule = 1

// headlineOf is a run's headline: for each kind of step, in the order the
// run first took it, one figure named by its first step's settings (a
// device step's first spec at its bound, whether or not a point met it;
// another kind's first figure), aggregated over every step of that kind
// (its repeats), so that every run of a study step has the same. A build's
// speed is a headline only in a run that measured nothing else.
func headlineOf(r *results.Run, figures []figure) []Figure {
	byStep := map[int][]figure{}
	for _, f := range figures {
		byStep[f.stepIndex] = append(byStep[f.stepIndex], f)
	}
	var names, builds []string
	seen := map[string]bool{}
	bounds := map[string]string{}
	for i, st := range r.Steps {
		if seen[st.Kind] {
			continue
		}
		name := ""
		if d, ok := st.Body.(*results.Device); ok && len(d.Specs) > 0 {
			name = "device." + d.Specs[0].Name + ".iops_at_max_latency"
			if d.Specs[0].JudgedOn == "mbps" {
				name = "device." + d.Specs[0].Name + ".max_mbps"
			} else {
				bounds[name] = "p99 ≤ " + results.Micros(d.MaxLatencyUs)
			}
		} else if fs := byStep[i]; len(fs) > 0 {
			name = st.Kind + "." + fs[0].Name
		}
		if name == "" {
			continue
		}
		seen[st.Kind] = true
		if st.Kind == results.KindOLTPBuild || st.Kind == results.KindDSSBuild {
			builds = append(builds, name)
		} else {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		names = builds
	}
	out := make([]Figure, 0, len(names))
	for _, n := range names {
		h := Figure{Name: n, Bound: bounds[n]}
		var vals []float64
		for _, f := range figures {
			if f.kind+"."+f.Name == n {
				vals, h.Unit = append(vals, f.Value), f.Unit
			}
		}
		if len(vals) > 0 {
			h.Value = aggregate(vals, h.Unit)
		}
		if h.Bound != "" {
			h.Missed = missedBound(r, strings.TrimSuffix(strings.TrimPrefix(n, "device."), ".iops_at_max_latency"))
		}
		out = append(out, h)
	}
	return out
}

// missedBound counts the complete device steps whose spec had no point
// under the bound.
func missedBound(r *results.Run, spec string) int {
	n := 0
	for _, st := range r.Steps {
		if d, ok := st.Body.(*results.Device); ok && st.Status == results.StatusComplete {
			for _, sp := range d.Specs {
				if sp.Name == spec && sp.AtMaxLatency == nil {
					n++
				}
			}
		}
	}
	return n
}

// Series is one figure's trend on one target: the runs of a label on one
// host's storage, oldest first.
type Series struct {
	Label   string  `json:"label"`
	Host    string  `json:"host"`
	Storage string  `json:"storage,omitempty"`
	Metric  string  `json:"metric"`
	Points  []Point `json:"points"`
}

// Point is a run's value of the figure: its repeats' median, range and n.
type Point struct {
	RunID     string    `json:"run_id"`
	StartedAt time.Time `json:"started_at"`
	Status    string    `json:"status"`
	Value
}

// Trend follows q.Metric (which it needs) across the runs q selects: one
// series per label and target, in label order, each oldest first and of
// at most q.Limit runs, its newest.
func (s *Store) Trend(ctx context.Context, q Query) ([]Series, error) {
	if q.Metric == "" {
		return nil, fault.Input("name the figure, e.g. --metric oltp.nopm", "a trend needs a metric")
	}
	// Each series keeps its own newest q.Limit runs: a limit over all of
	// them would cut the trends of many labels to a point each.
	all := q
	all.Limit, all.Offset = 0, 0
	rows, err := s.History(ctx, all)
	if err != nil {
		return nil, err
	}
	var out []Series
	at := map[[3]string]int{}
	for i := len(rows) - 1; i >= 0; i-- { // oldest first
		r := rows[i]
		key := [3]string{r.Label, r.Host, r.Storage}
		k, ok := at[key]
		if !ok {
			k = len(out)
			at[key] = k
			out = append(out, Series{Label: r.Label, Host: r.Host, Storage: r.Storage, Metric: q.Metric})
		}
		out[k].Points = append(out[k].Points, Point{RunID: r.ID, StartedAt: r.StartedAt, Status: r.Status, Value: *r.Metric})
	}
	for i := range out {
		if p := out[i].Points; q.Limit > 0 && len(p) > q.Limit {
			out[i].Points = p[len(p)-q.Limit:]
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		return a.Storage < b.Storage
	})
	return out, nil
}

// CheckMetric checks a --metric name: KIND.METRIC as thresholds and
// compare name figures (oltp.nopm, device.4k-randread.iops_at_max_latency).
func CheckMetric(flag, name string) error {
	kind, metric, ok := strings.Cut(name, ".")
	fix := "write it as KIND.METRIC, as --threshold does, e.g. oltp.nopm"
	if !ok || kind == "" || metric == "" {
		return fault.Input(fix, "%s %q names no metric", flag, name)
	}
	if _, known := results.MetricNames[kind]; !known {
		kinds := make([]string, 0, len(results.MetricNames))
		for k := range results.MetricNames {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		return fault.Input("use one of: "+strings.Join(kinds, ", "), "%s %q names no kind of step", flag, name)
	}
	if !results.KnownMetric(kind, metric) {
		return fault.Input("use one of: "+strings.Join(results.MetricNames[kind], ", "), "%s %q names no metric of %s", flag, name, kind)
	}
	return nil
}

// ParseWhen reads a --since or --until value (flag names it): a time in
// RFC 3339, a date (midnight UTC), or an age before now (36h, 7d); "" is
// the zero time, no bound.
func ParseWhen(flag, value string, now time.Time) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, value); err == nil {
			return t, nil
		}
	}
	age := value
	if n, ok := strings.CutSuffix(value, "d"); ok {
		if days, err := strconv.ParseFloat(n, 64); err == nil {
			age = strconv.FormatFloat(days*24, 'f', -1, 64) + "h"
		}
	}
	if d, err := time.ParseDuration(age); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fault.Input("give a time (2026-03-02, 2026-03-02T14:00:00Z) or an age (36h, 7d)", "%s %q is neither a time nor an age", flag, value)
}
