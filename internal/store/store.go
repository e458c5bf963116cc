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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver: no cgo

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/secret"
)

// BusyTimeout is how long a write waits for another calibra's to finish.
const BusyTimeout = 5 * time.Second

// ErrNoStore is what OpenExisting returns when no store file exists yet.
var ErrNoStore = errors.New("no results store yet")

// Store is an open results store.
type Store struct {
	db *sql.DB
	d  dialect
	// Path is the SQLite file; Where names the store in a sentence (the
	// file, or the PostgreSQL URL without its password).
	Path, Where string
	// Migrated is the line on stderr that says what opening the store
	// did to it, when it migrated an older schema; "" when nothing.
	Migrated string
}

// Access is what a command does with the store.
type Access int

const (
	// ReadOnly: history, serve, store check and --baseline, which work on
	// a store on a read-only file system.
	ReadOnly Access = iota
	// ReadWrite an existing store: store accept.
	ReadWrite
	// Create the store when there is none, and write it: a run's record
	// and store import.
	Create
)

// Open opens the SQLite store at path, making its directory (0700, as
// calibra's own: safefs.MkdirAllOwn) and the file when they do not exist,
// and brings its schema to this calibra's version.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, Create, SchemaVersion)
}

// OpenExisting opens the store at path read-only, for reading and
// checking; a store that does not exist yet is ErrNoStore (nothing is
// made).
func OpenExisting(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, ReadOnly, SchemaVersion)
}

// OpenSpec opens the store spec names for access: a SQLite file, or a
// PostgreSQL database, whose tables are made on first use whatever access
// says.
func OpenSpec(ctx context.Context, spec Spec, access Access) (*Store, error) {
	switch {
	case spec.None:
		return nil, errors.New("the results store is off (--store none)")
	case spec.Err != nil:
		return nil, spec.Err
	case spec.URL != "":
		return openPostgres(ctx, spec.URL, SchemaVersion)
	}
	return open(ctx, spec.Path, access, SchemaVersion)
}

// ConnectTimeout bounds the wait for a PostgreSQL store that does not
// answer: the run it records is over, and the store is only its index.
const ConnectTimeout = 10 * time.Second

// openPostgres opens a PostgreSQL store. Its password comes from the URL
// (CALIBRA_STORE or --store-file), PGPASSWORD or ~/.pgpass, as libpq's
// do; an error never holds it.
func openPostgres(ctx context.Context, dsn string, to int) (*Store, error) {
	where := secret.RedactDSN(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL store %s: calibra cannot read its URL", where)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = ConnectTimeout
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "calibra store"
	}
	// A lock held by another session (the migration's, a run's record)
	// is waited for as long as SQLite's busy timeout, then named.
	if cfg.RuntimeParams["lock_timeout"] == "" {
		cfg.RuntimeParams["lock_timeout"] = fmt.Sprint(BusyTimeout.Milliseconds())
	}
	db := stdlib.OpenDB(*cfg)
	hide := func(err error) error {
		if e := explain(where, true, err); e != err {
			return e
		}
		text := err.Error()
		if cfg.Password != "" {
			text = strings.ReplaceAll(text, cfg.Password, "xxxxx")
		}
		// pgx gives each address tried a line: one sentence.
		return fmt.Errorf("the PostgreSQL store %s: %s", where, strings.Join(strings.Fields(text), " "))
	}
	s := &Store{db: db, d: dialect{postgres: true}, Where: where}
	if err := s.migrate(ctx, to); err != nil {
		db.Close()
		return nil, hide(err)
	}
	return s, nil
}

// migrate brings s's schema to version to; a store that was at an older
// version (not a new one) gets its runs' headlines rebuilt and s.Migrated
// says what happened.
func (s *Store) migrate(ctx context.Context, to int) error {
	from, err := migrate(ctx, s.db, s.d, to)
	if err != nil || from == 0 || from >= to {
		return err
	}
	rebuilt, lacking, err := rebuildHeadlines(ctx, s.db, s.d)
	if err != nil {
		return err
	}
	s.Migrated = upgraded(s.Where, s.d, from, to, rebuilt, lacking)
	return nil
}

func open(ctx context.Context, path string, access Access, to int) (*Store, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	_, err = os.Lstat(path)
	missing := errors.Is(err, os.ErrNotExist)
	switch {
	case missing && access != Create:
		return nil, ErrNoStore
	case access == Create:
		if _, err := safefs.MkdirAllOwn(dir, 0o700); err != nil {
			return nil, explain(path, false, err)
		}
	}
	// Another account must not be able to swap the file (or its -wal and
	// -shm companions) for a link: the directory passes the rule, and
	// the file is opened once without following a final link before
	// SQLite opens it by name.
	if err := safefs.CheckDir(dir, "give --store sqlite:PATH in a directory only calibra's account (or root) can change"); err != nil {
		return nil, err
	}
	if access == ReadOnly {
		return openRead(ctx, path, to)
	}
	if missing {
		if err := create(ctx, path, to); err != nil {
			return nil, explain(path, false, err)
		}
	}
	f, err := safefs.OpenWrite(path, 0, 0o600)
	if err != nil {
		return nil, explain(path, false, err)
	}
	f.Close()
	s := &Store{db: sqliteDB(path, false, false), Path: path, Where: path}
	// A damaged store takes no record: one that touches no damaged page
	// would succeed, and be lost with the rest.
	if !missing {
		if err := checkIntegrity(ctx, s.db, path); err != nil {
			s.db.Close()
			return nil, err
		}
	}
	if err := s.migrate(ctx, to); err != nil {
		s.db.Close()
		if e := explain(path, false, err); e != err {
			return nil, e
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// sqliteDB is the SQLite file at path, for writing (in WAL mode, so
// readers never wait for a writer) or read-only: immutable on a read-only
// file system.
func sqliteDB(path string, readOnly, immutable bool) *sql.DB {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if readOnly {
		q.Set("mode", "ro")
		if immutable {
			q.Set("immutable", "1")
		}
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate") // a writer waits for the lock at BEGIN, not at its first write
	}
	db, _ := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode()) // connects at first use: no error here
	return db
}

// create makes a new store at path whole or not at all: its schema is
// made in a file beside it, which then takes the name. A full disk leaves
// no empty results.db that later commands would take for a store.
func create(ctx context.Context, path string, to int) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*") // O_EXCL, 0600, in a directory CheckDir passed
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = safefs.Remove(dir, filepath.Base(tmp)+suffix)
		}
	}()
	db := sqliteDB(tmp, false, false)
	_, err = migrate(ctx, db, dialect{}, to)
	// Closing the last connection checkpoints the WAL into the file.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(tmp + "-wal"); err == nil {
		return fmt.Errorf("the new store's log %s-wal was not written into it", tmp)
	}
	// A link, not a rename: another calibra that made the store meanwhile
	// keeps it.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

// openRead opens the store at path read-only. One at an older version is
// migrated first, when its file system can be written.
func openRead(ctx context.Context, path string, to int) (*Store, error) {
	f, err := safefs.OpenInput(path)
	if err != nil {
		return nil, err
	}
	f.Close()
	s := &Store{db: sqliteDB(path, true, immutable(path)), Path: path, Where: path}
	cur, err := s.version(ctx)
	switch {
	case err != nil:
		s.db.Close()
		return nil, explain(path, false, err)
	case cur == to:
		return s, nil
	}
	s.db.Close()
	if cur < to && readOnlyFS(path) {
		return nil, fault.Input("mount it read-write once and run calibra store check there (which migrates it), or read it with the calibra that recorded it",
			"the results store %s has schema version %d, older than this calibra's %d, and lies on a read-only file system, where calibra cannot migrate it", path, cur, to)
	}
	w, err := open(ctx, path, ReadWrite, to)
	if err != nil {
		return nil, err
	}
	w.Close()
	r, err := openRead(ctx, path, to)
	if err != nil {
		return nil, err
	}
	r.Migrated = w.Migrated
	return r, nil
}

// version is the store's schema version; 0 for an empty file.
func (s *Store) version(ctx context.Context) (int, error) {
	var tables int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'`).Scan(&tables); err != nil || tables == 0 {
		return 0, err
	}
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v)
	return int(v.Int64), err
}

// readOnlyFS says whether path's file system is mounted read-only.
func readOnlyFS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(filepath.Dir(path), &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// immutable says whether a reader takes the store at path as a file no
// one changes: on a file system that is read-only or full, SQLite cannot
// make the -shm file a reader of a WAL store needs, and no writer can
// change it there either; a -wal file beside it that holds anything
// (what the file lacks) rules it out.
func immutable(path string) bool {
	if !readOnlyFS(path) && !noRoom(path) {
		return false
	}
	st, err := os.Lstat(path + "-wal")
	return errors.Is(err, os.ErrNotExist) || err == nil && st.Size() == 0
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
		r, files, err := readRunDir(abs)
		if err != nil {
			return nil, err
		}
		if r.StartedAt.IsZero() || r.Status == "" {
			return nil, fault.Input("give a run directory calibra wrote, or rerun the command that wrote it", "%s/results.json has no status or start time", abs)
		}
		rec := newRecord(abs, r)
		rec.files = files
		recs = append(recs, rec)
	}
	return recs, nil
}

// IDs are the runs' ids, in their order.
func (r Runs) IDs() []string {
	ids := make([]string, len(r))
	for i, rec := range r {
		ids[i] = rec.id
	}
	return ids
}

// Write records runs in one transaction: all of them or none. A run
// recorded before is replaced. It returns their ids, in runs' order.
func (s *Store) Write(ctx context.Context, runs Runs) (_ []string, err error) {
	defer func() { err = s.Explain(err) }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	w, err := s.prepare(ctx, tx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	// Each run's row is locked (PostgreSQL) in the order of its id, so two
	// imports of the same runs wait for each other and never deadlock.
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return runs[order[a]].id < runs[order[b]].id })
	ids := make([]string, len(runs))
	for _, i := range order {
		if err := w.write(ctx, runs[i]); err != nil {
			return nil, err
		}
		ids[i] = runs[i].id
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
	files   stored
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

// writer is a transaction's prepared statements.
type writer struct {
	upsert, figure, verdict, warning, baseRun *sql.Stmt
	clear                                     []*sql.Stmt // a run's figures, verdicts, warnings and baseline runs
	all                                       []*sql.Stmt
}

// runColumns are the runs table's columns as write fills them, id first.
var runColumns = []string{"id", "dir", "label", "status", "started_at", "finished_at", "error", "command",
	"tool_version", "tool_commit", "host", "storage_path", "storage_fs", "storage_device", "engine_name", "engine_version",
	"engine_settings", "study", "study_json", "figure_count", "recorded_at", "headline", "recorded_on", "results_gz", "timeseries_gz", "headline_rule"}

func (s *Store) prepare(ctx context.Context, tx *sql.Tx) (*writer, error) {
	set := make([]string, 0, len(runColumns)-1)
	for _, c := range runColumns[1:] {
		set = append(set, c+" = excluded."+c)
	}
	// An upsert, not a delete and an insert: a second writer of the same
	// run waits on its row, then replaces it.
	upsert := `INSERT INTO runs (` + strings.Join(runColumns, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(runColumns)-1) +
		`) ON CONFLICT (id) DO UPDATE SET ` + strings.Join(set, ", ")
	texts := []string{upsert,
		`INSERT INTO figures (run_id, step_index, kind, step, study_step, repeat, point, metric, value, unit, better) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		`INSERT INTO verdicts (run_id, step_index, step, kind, verdict, ok, value, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		`INSERT INTO warnings (run_id, text) VALUES (?, ?)`,
		`INSERT INTO baseline_runs (run_id, position, base_id) VALUES (?, ?, ?)`,
		`DELETE FROM figures WHERE run_id = ?`, `DELETE FROM verdicts WHERE run_id = ?`, `DELETE FROM warnings WHERE run_id = ?`,
		`DELETE FROM baseline_runs WHERE run_id = ?`}
	w := &writer{}
	for _, t := range texts {
		st, err := tx.PrepareContext(ctx, s.d.rebind(t))
		if err != nil {
			w.close()
			return nil, err
		}
		w.all = append(w.all, st)
	}
	w.upsert, w.figure, w.verdict, w.warning, w.baseRun, w.clear = w.all[0], w.all[1], w.all[2], w.all[3], w.all[4], w.all[5:]
	return w, nil
}

func (w *writer) close() {
	for _, st := range w.all {
		st.Close()
	}
}

func (w *writer) write(ctx context.Context, rec record) error {
	r := rec.run
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
	headline, _ := json.Marshal(headlineOf(rec.run, rec.figures))
	st := r.Meta.Storage
	if _, err := w.upsert.ExecContext(ctx, rec.id, rec.dir, r.Meta.Label, r.Status, formatTime(r.StartedAt), finished, r.Error, r.Meta.Command,
		r.Meta.ToolVersion, r.Meta.ToolCommit, r.Meta.Host.Hostname, st.Path, st.FS, st.Device, engName, engVersion,
		string(settings), studyName(r.Meta.Study), string(study), len(rec.figures), formatTime(time.Now()), string(headline), thisHost(), rec.files.results, rec.files.timeseries, HeadlineRule); err != nil {
		return err
	}
	for _, del := range w.clear {
		if _, err := del.ExecContext(ctx, rec.id); err != nil {
			return err
		}
	}
	for _, f := range rec.figures {
		if _, err := w.figure.ExecContext(ctx, rec.id, f.stepIndex, f.kind, f.step, f.studyStep, f.repeat, f.point, f.Name, f.Value, f.Unit, f.Better); err != nil {
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
		if _, err := w.verdict.ExecContext(ctx, rec.id, i, s.Kind+"/"+s.Name, "limited_by", s.LimitedBy, nil, nil, rule); err != nil {
			return err
		}
	}
	for _, v := range r.Verdicts {
		ok := 0
		if v.OK {
			ok = 1
		}
		if _, err := w.verdict.ExecContext(ctx, rec.id, nil, v.Step, "threshold", v.Threshold, ok, v.Value, v.Reason); err != nil {
			return err
		}
	}
	for _, text := range r.Warnings {
		if _, err := w.warning.ExecContext(ctx, rec.id, text); err != nil {
			return err
		}
	}
	return w.writeBaseline(ctx, rec)
}

// Disagreement is a recorded run its directory no longer matches.
type Disagreement struct {
	ID, Dir string
	What    string // one sentence
}

func (d Disagreement) String() string { return d.ID + " (" + d.Dir + "): " + d.What }

// thisHost names the host that records a run: its run directory is on
// this host's file system.
func thisHost() string {
	h, _ := os.Hostname()
	return h
}

// Check compares every run recorded on this host with its directory: the
// directory must exist and its results.json must have the recorded status
// and number of figures. Runs other hosts recorded (into a shared
// PostgreSQL store) have their directories there: those hosts check them.
func (s *Store) Check(ctx context.Context) (checked int, out []Disagreement, err error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT id, dir, status, figure_count FROM runs
		WHERE recorded_on = ? OR recorded_on = '' ORDER BY started_at, id`), thisHost())
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
