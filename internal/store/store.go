package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver: no cgo

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// BusyTimeout is how long a write waits for another calibra's to finish.
const BusyTimeout = 5 * time.Second

// ErrNoStore is what OpenExisting returns when no store file exists yet.
var ErrNoStore = errors.New("no results store yet")

// Store is an open results store.
type Store struct {
	db   *sql.DB
	Path string
}

// Open opens the SQLite store at path, making its directory (0700, as
// calibra's own: safefs.MkdirAllOwn) and the file when they do not exist,
// and brings its schema to this calibra's version.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, true, SchemaVersion)
}

// OpenExisting opens the store at path for reading and checking; a store
// that does not exist yet is ErrNoStore (nothing is made).
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, false, SchemaVersion)
}

func open(ctx context.Context, path string, create bool, to int) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if !create {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoStore
		}
	} else if _, err := safefs.MkdirAllOwn(dir, 0o700); err != nil {
		return nil, err
	}
	// Another account must not be able to swap the file (or its -wal and
	// -shm companions) for a link: the directory passes the rule, and
	// the file is opened once without following a final link before
	// SQLite opens it by name.
	if err := safefs.CheckDir(dir, "give --store sqlite:PATH in a directory only calibra's account (or root) can change"); err != nil {
		return nil, err
	}
	f, err := safefs.OpenWrite(path, os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate") // a writer waits for the lock at BEGIN, not at its first write
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if _, err := version(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s is not a results store calibra can read: %w", path, err)
	}
	if err := migrate(ctx, db, to); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, Path: path}, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Record records the run directory dir: its results.json, read through
// results.Load, replaces any earlier record of the same run.
func (s *Store) Record(ctx context.Context, dir string) (string, error) {
	ids, err := s.Import(ctx, []string{dir})
	if err != nil {
		return "", err
	}
	return ids[0], nil
}

// Import records run directories in one transaction, after reading every
// one of them (Read): a directory without a valid results.json is refused
// and nothing is written. It returns the runs' ids, in dirs' order.
func (s *Store) Import(ctx context.Context, dirs []string) ([]string, error) {
	runs, err := Read(dirs)
	if err != nil {
		return nil, err
	}
	return s.Write(ctx, runs)
}

// Runs are run directories read and ready to record.
type Runs []record

// Read reads run directories as the store records them; a directory
// without a valid results.json is bad input (exit 2), in one sentence.
func Read(dirs []string) (Runs, error) {
	recs := make(Runs, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		r, err := results.Load(abs)
		if err != nil {
			return nil, err
		}
		if r.StartedAt.IsZero() || r.Status == "" {
			return nil, fault.Input("give a run directory calibra wrote, or rerun the command that wrote it", "%s/results.json has no status or start time", abs)
		}
		recs = append(recs, newRecord(abs, r))
	}
	return recs, nil
}

// Write records runs in one transaction: all of them or none. A run
// recorded before is replaced. It returns their ids.
func (s *Store) Write(ctx context.Context, runs Runs) ([]string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ids := make([]string, len(runs))
	for i, rec := range runs {
		if err := rec.write(ctx, tx); err != nil {
			return nil, err
		}
		ids[i] = rec.id
	}
	return ids, tx.Commit()
}

// timeFormat is fixed-width, so that the text sorts as the time does.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// RunID names a run by its directory's name and start time, which stay
// the same however often the directory is recorded (results.json has no
// id of its own).
func RunID(dir string, r *results.Run) string {
	return filepath.Base(dir) + "@" + formatTime(r.StartedAt)
}

// figure is one recorded figure.
type figure struct {
	stepIndex, studyStep, repeat int
	kind, step, point            string
	results.Metric
}

// figuresOf lists every figure of a run: each step's results.Metrics (the
// names thresholds and compare use), with the step as compare names it
// (kind/name) and the point the figure is at (the part of its name before
// the last dot: a device spec and queue depth, a transaction type).
func figuresOf(r *results.Run) []figure {
	var out []figure
	for i, st := range r.Steps {
		for _, m := range results.Metrics(st) {
			point := ""
			if k := strings.LastIndex(m.Name, "."); k > 0 {
				point = m.Name[:k]
			}
			out = append(out, figure{stepIndex: i, studyStep: st.StudyStep, repeat: st.Repeat, kind: st.Kind, step: st.Kind + "/" + st.Name, point: point, Metric: m})
		}
	}
	return out
}

// record is a run as the store keeps it.
type record struct {
	id, dir string
	run     *results.Run
	figures []figure
}

func newRecord(dir string, r *results.Run) record {
	return record{id: RunID(dir, r), dir: dir, run: r, figures: figuresOf(r)}
}

// studyName is the study's name or the preset it came from.
func studyName(study map[string]any) string {
	if n, ok := study["name"].(string); ok {
		return n
	}
	if fl, ok := study["flags"].(map[string]any); ok {
		if p, ok := fl["preset"].(string); ok {
			return p
		}
	}
	return ""
}

func (rec record) write(ctx context.Context, tx *sql.Tx) error {
	r := rec.run
	for _, t := range []string{"figures", "verdicts", "warnings", "runs"} {
		col := "run_id"
		if t == "runs" {
			col = "id"
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+t+` WHERE `+col+` = ?`, rec.id); err != nil {
			return err
		}
	}
	finished := ""
	if r.FinishedAt != nil {
		finished = formatTime(*r.FinishedAt)
	}
	var engName, engVersion string
	settings := []byte("{}")
	if e := r.Meta.Engine; e != nil {
		engName, engVersion = e.Name, e.Version
		if e.Settings != nil {
			settings, _ = json.Marshal(e.Settings)
		}
	}
	study := []byte("{}")
	if r.Meta.Study != nil {
		if b, err := json.Marshal(r.Meta.Study); err == nil {
			study = b
		}
	}
	st := r.Meta.Storage
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs (id, dir, label, status, started_at, finished_at, error, command,
		tool_version, tool_commit, host, storage_path, storage_fs, storage_device, engine_name, engine_version,
		engine_settings, study, study_json, figure_count, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		rec.id, rec.dir, r.Meta.Label, r.Status, formatTime(r.StartedAt), finished, r.Error, r.Meta.Command,
		r.Meta.ToolVersion, r.Meta.ToolCommit, r.Meta.Host.Hostname, st.Path, st.FS, st.Device, engName, engVersion,
		string(settings), studyName(r.Meta.Study), string(study), len(rec.figures), formatTime(time.Now())); err != nil {
		return err
	}
	for _, f := range rec.figures {
		if _, err := tx.ExecContext(ctx, `INSERT INTO figures (run_id, step_index, kind, step, study_step, repeat, point, metric, value, unit, better)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.id, f.stepIndex, f.kind, f.step, f.studyStep, f.repeat, f.point, f.Name, f.Value, f.Unit, f.Better); err != nil {
			return err
		}
	}
	for i, s := range r.Steps {
		if s.LimitedBy == "" {
			continue
		}
		rule := ""
		if s.LimitedByEvidence != nil {
			rule = s.LimitedByEvidence.Rule
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO verdicts (run_id, step_index, step, kind, verdict, detail) VALUES (?, ?, ?, 'limited_by', ?, ?)`,
			rec.id, i, s.Kind+"/"+s.Name, s.LimitedBy, rule); err != nil {
			return err
		}
	}
	for _, v := range r.Verdicts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO verdicts (run_id, step, kind, verdict, ok, value, detail) VALUES (?, ?, 'threshold', ?, ?, ?, ?)`,
			rec.id, v.Step, v.Threshold, v.OK, v.Value, v.Reason); err != nil {
			return err
		}
	}
	for _, w := range r.Warnings {
		if _, err := tx.ExecContext(ctx, `INSERT INTO warnings (run_id, text) VALUES (?, ?)`, rec.id, w); err != nil {
			return err
		}
	}
	return writeBaseline(ctx, tx, rec)
}

// Disagreement is a recorded run its directory no longer matches.
type Disagreement struct {
	ID, Dir string
	What    string // one sentence
}

func (d Disagreement) String() string { return d.ID + " (" + d.Dir + "): " + d.What }

// Check compares every recorded run with its directory: the directory
// must exist and its results.json must have the recorded status and
// number of figures.
func (s *Store) Check(ctx context.Context) (checked int, out []Disagreement, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, dir, status, figure_count FROM runs ORDER BY started_at, id`)
	if err != nil {
		return 0, nil, err
	}
	type rec struct {
		id, dir, status string
		figures         int
	}
	var recs []rec
	for rows.Next() {
		var r rec
		if err := rows.Scan(&r.id, &r.dir, &r.status, &r.figures); err != nil {
			rows.Close()
			return 0, nil, err
		}
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return checked, out, err
		}
		checked++
		bad := func(format string, args ...any) {
			out = append(out, Disagreement{ID: r.id, Dir: r.dir, What: fmt.Sprintf(format, args...)})
		}
		if _, err := os.Stat(r.dir); err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				bad("the run directory is gone")
			} else {
				bad("the run directory cannot be read: %v", err)
			}
			continue
		}
		run, err := results.Load(r.dir)
		if err != nil {
			bad("%v", err)
			continue
		}
		if id := RunID(r.dir, run); id != r.id {
			bad("the directory now holds another run (%s)", id)
			continue
		}
		if run.Status != r.status {
			bad("results.json says status %s, the store %s", run.Status, r.status)
		}
		if n := len(figuresOf(run)); n != r.figures {
			bad("results.json holds %d figures, the store %d", n, r.figures)
		}
	}
	return checked, out, nil
}

// Query selects runs for History.
type Query struct {
	Label  string // a glob (SQLite GLOB: * ? [...]), "" for every label
	Metric string // KIND.METRIC, "" for none: then only runs that have it
	Limit  int    // at most this many runs, newest first; 0 for all
}

// Value is a metric's value in one run: the median of its steps' values
// when the run measured it more than once (repeats), with their count.
type Value struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	N     int     `json:"n"`
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
	Study         string    `json:"study,omitempty"`
	Dir           string    `json:"dir"`
	Figures       int       `json:"figures"`
	Metric        *Value    `json:"metric,omitempty"`
}

// History lists recorded runs, newest first.
func (s *Store) History(ctx context.Context, q Query) ([]Row, error) {
	where, args := []string{"1 = 1"}, []any{}
	if q.Label != "" {
		where, args = append(where, "label GLOB ?"), append(args, q.Label)
	}
	kind, name, _ := strings.Cut(q.Metric, ".")
	if q.Metric != "" {
		where = append(where, "EXISTS (SELECT 1 FROM figures f WHERE f.run_id = runs.id AND f.kind = ? AND f.metric = ?)")
		args = append(args, kind, name)
	}
	sqlText := `SELECT id, started_at, label, status, command, engine_name, engine_version, host, storage_path, study, dir, figure_count
		FROM runs WHERE ` + strings.Join(where, " AND ") + ` ORDER BY started_at DESC, id DESC`
	if q.Limit > 0 {
		sqlText += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, err
	}
	var out []Row
	for rows.Next() {
		var r Row
		var started string
		if err := rows.Scan(&r.ID, &started, &r.Label, &r.Status, &r.Command, &r.Engine, &r.EngineVersion, &r.Host, &r.Storage, &r.Study, &r.Dir, &r.Figures); err != nil {
			rows.Close()
			return nil, err
		}
		r.StartedAt, _ = time.Parse(timeFormat, started)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if q.Metric == "" {
		return out, nil
	}
	for i := range out {
		v, err := s.value(ctx, out[i].ID, kind, name)
		if err != nil {
			return nil, err
		}
		out[i].Metric = v
	}
	return out, nil
}

// value is a run's figure kind.name: the median over its steps.
func (s *Store) value(ctx context.Context, id, kind, name string) (*Value, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT value, unit FROM figures WHERE run_id = ? AND kind = ? AND metric = ?`, id, kind, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vs []float64
	unit := ""
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v, &unit); err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil || len(vs) == 0 {
		return nil, err
	}
	sort.Float64s(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return &Value{Value: m, Unit: unit, N: len(vs)}, nil
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
