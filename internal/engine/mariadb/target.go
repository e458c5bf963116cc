package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/secret"
)

// TargetConfig says which server to use: an existing one (DSN) or the
// managed instance under Path.
type TargetConfig struct {
	DSN            string
	Path           string
	Bin            string
	RunAs          string
	DBCache        string
	MaxConnections int
	ServerLog      string
	Cgroup         *limits.Cgroup
	Settings       map[string]string
	WALPath        string
	// Galera, when above 0, makes the managed target a Galera cluster of
	// that many nodes (PrepareCluster).
	Galera int
	node   int // the node PrepareCluster prepares
}

// Target is the database calibra measures, managed or not.
type Target struct {
	Managed *Instance // nil with --dsn
	// Repairs say what Start cleared of a template save or a reset that an
	// earlier command's interruption cut short.
	Repairs []string
	cfg     *mysql.Config // calibra's database
	Info    results.Engine
	// exactTx: performance_schema counts transactions (see Transactions).
	exactTx bool
	// cluster is the Galera cluster the target is a node of; nil for a
	// single server.
	cluster  *Cluster
	swapHook server.SwapHook // a test's
}

// Prepare checks everything that can be checked before a run directory
// exists: binaries, the account and its access, the settings, the DSN's
// syntax and reach.
func Prepare(ctx context.Context, cfg TargetConfig) (*Target, error) {
	if cfg.DSN != "" {
		mc, err := ParseDSN(cfg.DSN)
		if err != nil {
			return nil, err
		}
		db, err := Connect(ctx, mc)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		t := &Target{cfg: mc, Info: results.Engine{Name: Name, Target: secret.RedactDSN(cfg.DSN)}}
		if t.Info.Version, t.Info.Settings, err = Describe(ctx, db); err != nil {
			return nil, fmt.Errorf("read server settings: %w", err)
		}
		t.exactTx = transactionsInstrumented(ctx, db)
		// This session closes before the command opens its own.
		var free int
		if err := db.QueryRowContext(ctx, `SELECT @@max_connections - CAST(VARIABLE_VALUE AS UNSIGNED) + 1
			FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'`).Scan(&free); err != nil {
			return nil, fmt.Errorf("read the server's free connections: %w", err)
		}
		if err := engine.CheckConnections(free, cfg.MaxConnections); err != nil {
			return nil, err
		}
		return t, nil
	}
	bin, err := FindBinaries(cfg.Bin)
	if err != nil {
		return nil, err
	}
	if err := CheckSettings(cfg.Settings); err != nil {
		return nil, err
	}
	if cfg.DBCache != "" {
		if _, err := sizeBytes(cfg.DBCache); err != nil {
			return nil, err
		}
	}
	in, err := NewInstance(InstanceConfig{Path: cfg.Path, Bin: bin, RunAs: cfg.RunAs, DBCache: cfg.DBCache,
		MaxConnections: cfg.MaxConnections, LogFile: cfg.ServerLog, Cgroup: cfg.Cgroup, Settings: cfg.Settings, WALPath: cfg.WALPath, Node: cfg.node})
	if err != nil {
		return nil, err
	}
	return &Target{Managed: in, Info: results.Engine{Name: Name, Version: bin.Version, Managed: true, Target: in.DataDir}}, nil
}

// SetServerLog names the managed server's log file (in the run directory,
// which exists only after Prepare).
func (t *Target) SetServerLog(path string) {
	if t.Managed != nil {
		t.Managed.cfg.LogFile = path
	}
}

// Start initialises (first time only) and starts the managed instance,
// clears what an interrupted save or reset left, and makes sure calibra's
// database exists; with a DSN it does nothing.
func (t *Target) Start(ctx context.Context, group *proc.Group) (initialised bool, err error) {
	in := t.Managed
	if in == nil {
		return false, nil
	}
	if !in.Exists() {
		if err := in.Init(ctx, group); err != nil {
			return false, err
		}
		initialised = true
	}
	if err := in.Start(ctx, group); err != nil {
		return initialised, err
	}
	db, err := Connect(ctx, in.Config(""))
	if err != nil {
		return initialised, fmt.Errorf("connect to the managed instance: %w", err)
	}
	defer db.Close()
	if t.Repairs, err = t.repair(ctx, db); err != nil {
		return initialised, fmt.Errorf("clear an interrupted save or reset: %w", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+Database); err != nil {
		return initialised, fmt.Errorf("create database %s: %w", Database, err)
	}
	version, settings, err := Describe(ctx, db)
	if err != nil {
		return initialised, fmt.Errorf("read server settings: %w", err)
	}
	t.Info.Version = version
	// The instruments are options, not variables: recorded as given.
	settings["performance_schema_instrument"] = strings.Join(instruments, " ")
	if _, ok := settings["wsrep_cluster_name"]; ok && t.cluster != nil {
		// Random per cluster (galera_tls.go); results are readable by others.
		settings["wsrep_cluster_name"] = "(random, not recorded)"
	}
	t.Info.Settings = settings
	t.exactTx = transactionsInstrumented(ctx, db)
	t.cfg = in.Config(Database)
	return initialised, nil
}

// GaleraNode says whether the target is a node of a Galera cluster.
func (t *Target) GaleraNode() bool { return t.cluster != nil }

// Cluster is the Galera cluster the target is a node of; nil for a single
// server.
func (t *Target) Cluster() *Cluster { return t.cluster }

// ErrNoRestart is Restart's answer for a server calibra does not manage.
var ErrNoRestart = errors.New("calibra cannot restart a server it does not manage (--dsn)")

// Restart is a cold start of the managed instance: stop, evict its files
// from the OS page cache (reported), start on the same socket with an
// empty buffer pool.
func (t *Target) Restart(ctx context.Context, group *proc.Group) (cacheDropped bool, err error) {
	if t.Managed == nil {
		return false, ErrNoRestart
	}
	return t.Managed.Restart(ctx, group)
}

// Stop stops the managed instance, if any.
func (t *Target) Stop() error {
	if t.Managed == nil {
		return nil
	}
	return t.Managed.Stop()
}

// Config returns a fresh copy of the connection settings of calibra's
// database, to which callers add their own; on the managed instance, once
// it has started (nil before).
func (t *Target) Config() *mysql.Config {
	if t.cfg == nil {
		return nil // not started: no database yet to connect to
	}
	return t.cfg.Clone()
}

// DB opens a pool on calibra's database.
func (t *Target) DB() *sql.DB { return Open(t.Config()) }

// admin is a pool on the managed instance outside calibra's database, from
// which that database's tables can be swapped.
func (t *Target) admin() (*sql.DB, error) {
	if t.Managed == nil {
		return nil, errors.New("calibra keeps a loaded template only on the instance it manages, not on a --dsn server")
	}
	return Open(t.Managed.Config("")), nil
}

// transactionsInstrumented reports whether performance_schema counts
// transactions on this server.
func transactionsInstrumented(ctx context.Context, db *sql.DB) bool {
	var enabled string
	err := db.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'transaction'").Scan(&enabled)
	if err != nil || enabled != "YES" {
		return false
	}
	var n int64
	return db.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.events_transactions_summary_by_user_by_event_name").Scan(&n) == nil
}

// Transactions counts the transactions calibra's account has ended
// (committed or rolled back), for tpm_db.
//
// Where performance_schema instruments transactions (always on the
// managed instance), it is COUNT_STAR of
// events_transactions_summary_by_user_by_event_name for calibra's account:
// one per transaction, explicit (BEGIN ... COMMIT/ROLLBACK) or autocommit,
// that touched a table; a statement that touches none (SELECT 1) is none,
// and neither are the server's background threads or other accounts.
//
// Elsewhere it is Handler_commit + Handler_rollback from SHOW GLOBAL
// STATUS: every account's, and an upper bound, as InnoDB counts a commit
// for each statement inside an explicit transaction as well as for the
// transaction (BEGIN; four statements; COMMIT adds 5 on 10.11).
// Com_commit is no measure at all: it counts COMMIT statements only.
func (t *Target) Transactions(ctx context.Context) (int64, error) {
	if t.cfg == nil {
		return 0, errors.New("read the transaction counter: the managed instance has not been started")
	}
	db := Open(t.Config())
	defer db.Close()
	q, args := t.TransactionsQuery()
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT "+q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the transaction counter: %w", err)
	}
	return n, nil
}

// ExactTransactions reports whether Transactions counts calibra's own
// transactions exactly (performance_schema), not every account's engine
// commits (Handler_commit + Handler_rollback, an upper bound).
func (t *Target) ExactTransactions() bool { return t.exactTx }

// TransactionsQuery is Transactions' count as a scalar subquery and its
// arguments, for a workload that reads it in the same statement as its
// own window-edge figures (one statement, one transaction of its own).
func (t *Target) TransactionsQuery() (string, []any) {
	if t.exactTx {
		return `(SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_transactions_summary_by_user_by_event_name
			WHERE USER = ?)`, []any{t.cfg.User}
	}
	return "(" + fmt.Sprintf(handlerTotal, "information_schema.GLOBAL_STATUS") + ")", nil
}

// handlerTotal sums Handler_commit and Handler_rollback from a status
// table (%s). The values are text: a bare SUM adds them as doubles, which
// the driver returns as "2.173537e+06" once past a million, and which no
// integer scan takes (nor could a double hold a counter past 2^53).
const handlerTotal = `SELECT COALESCE(SUM(CAST(VARIABLE_VALUE AS UNSIGNED)), 0) FROM %s
			WHERE VARIABLE_NAME IN ('HANDLER_COMMIT', 'HANDLER_ROLLBACK')`

// The loaded template. The managed instance keeps it as a copy of every
// base table of calibra's database in one of two schemas, used in turn;
// the row of templateTable (an InnoDB table, so one atomic commit) names
// the complete one and holds its note. Saving copies into the other
// schema and only then points the row at it, so an interruption at any
// moment leaves either the old template or the new one, never a part.
//
// A reset copies the template's tables into a staging schema and swaps
// them with calibra's in one RENAME TABLE, which MariaDB makes atomic and
// crash-safe (10.6+): calibra's database holds either all the old tables
// or all the template's. Stored procedures and views stay in calibra's
// database: only tables move (MariaDB moves none with triggers between
// schemas, so a workload creates its triggers after the reset).
//
// The copies are file copies of the tables' tablespaces where InnoDB can
// import them (see copySchema): a save or a reset costs about one
// sequential read and write of the data and its indexes, plus the
// import's pass over the pages.
const (
	metaSchema    = "calibra_meta"
	templateTable = metaSchema + ".template"
	slotA         = "calibra_template_a"
	slotB         = "calibra_template_b"
	stagingNew    = Database + "_new"
	stagingOld    = Database + "_old"
)

// SaveTemplate copies calibra's database into the template, replacing an
// older one, and labels it with note. Nobody may be writing to calibra's
// database.
func (t *Target) SaveTemplate(ctx context.Context, note string) (string, error) {
	db, err := t.admin()
	if err != nil {
		return "", err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	for _, q := range []string{"CREATE DATABASE IF NOT EXISTS " + metaSchema,
		"CREATE TABLE IF NOT EXISTS " + templateTable + " (id TINYINT PRIMARY KEY, slot VARCHAR(64) NOT NULL, note TEXT NOT NULL) ENGINE=InnoDB"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return "", err
		}
	}
	current, _, exists, err := templateRow(ctx, conn)
	if err != nil {
		return "", err
	}
	next := slotA
	if exists && current == slotA {
		next = slotB
	}
	if err := t.copySchema(ctx, conn, Database, next); err != nil {
		return "", fmt.Errorf("copy the loaded database: %w", err)
	}
	t.swapHook.Step("template copied")
	if _, err := conn.ExecContext(ctx, "REPLACE INTO "+templateTable+" VALUES (1, ?, ?)", next, note); err != nil {
		return "", err
	}
	t.swapHook.Step("template switched")
	if exists && current != next {
		if err := t.dropSchema(ctx, conn, current); err != nil {
			return "", err
		}
	}
	return next, nil
}

// TemplateNote returns the note the loaded template was saved with, and
// whether there is a template at all.
func (t *Target) TemplateNote(ctx context.Context) (note string, exists bool, err error) {
	db, err := t.admin()
	if err != nil {
		return "", false, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", false, err
	}
	defer conn.Close()
	_, note, exists, err = templateRow(ctx, conn)
	return note, exists, err
}

// templateRow reads the template's slot and note; none before the first save.
func templateRow(ctx context.Context, conn *sql.Conn) (slot, note string, exists bool, err error) {
	err = conn.QueryRowContext(ctx, "SELECT slot, note FROM "+templateTable+" WHERE id = 1").Scan(&slot, &note)
	var myErr *mysql.MySQLError
	switch {
	case errors.Is(err, sql.ErrNoRows), errors.As(err, &myErr) && (myErr.Number == 1146 || myErr.Number == 1049):
		return "", "", false, nil // no row, no table (1146), no schema (1049)
	case err != nil:
		return "", "", false, err
	}
	return slot, note, true, nil
}

// RestoreTemplate makes calibra's tables the template's again: the open
// equivalent of a guaranteed restore point. Sessions still using calibra's
// database are ended first, as PostgreSQL's DROP DATABASE ... FORCE ends
// them.
func (t *Target) RestoreTemplate(ctx context.Context) error {
	db, err := t.admin()
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	slot, _, exists, err := templateRow(ctx, conn)
	if err != nil {
		return err
	}
	if !exists {
		return fault.Input("build it again with 'calibra oltp build --rebuild', which keeps one", "there is no loaded template to reset from (a build interrupted before it kept one leaves none)")
	}
	if err := t.copySchema(ctx, conn, slot, stagingNew); err != nil {
		return fmt.Errorf("copy the template: %w", err)
	}
	t.swapHook.Step("database copied")
	if err := t.recreate(ctx, conn, stagingOld); err != nil {
		return err
	}
	if err := endSessions(ctx, conn, Database); err != nil {
		return err
	}
	// A session working elsewhere may still hold one of calibra's tables:
	// the swap then fails after a while rather than waiting a day.
	if _, err := conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 300"); err != nil {
		return err
	}
	current, err := baseTables(ctx, conn, Database)
	if err != nil {
		return err
	}
	loaded, err := baseTables(ctx, conn, stagingNew)
	if err != nil {
		return err
	}
	var pairs []string
	for _, tb := range current {
		pairs = append(pairs, qualified(Database, tb)+" TO "+qualified(stagingOld, tb))
	}
	for _, tb := range loaded {
		pairs = append(pairs, qualified(stagingNew, tb)+" TO "+qualified(Database, tb))
	}
	if len(pairs) > 0 {
		if _, err := conn.ExecContext(ctx, "RENAME TABLE "+strings.Join(pairs, ", ")); err != nil {
			return fmt.Errorf("swap in the template's tables: %w", err)
		}
	}
	t.swapHook.Step("tables swapped")
	for _, s := range []string{stagingOld, stagingNew} {
		if err := t.dropSchema(ctx, conn, s); err != nil {
			return err
		}
	}
	return nil
}

// copySchema makes schema to anew as a copy of every base table of from.
//
// A plain InnoDB table (its own .ibd file, not partitioned, no full-text
// index) is copied as a file, as MariaDB's transportable tablespaces do:
// FLUSH TABLES ... FOR EXPORT makes the source files consistent and holds
// them read-only, the files are copied beside an empty twin whose own
// tablespace was discarded, and IMPORT TABLESPACE adopts them. Any other
// table is copied row by row (INSERT ... SELECT), about five times slower
// (a 184 MiB table here: 0.6-1.1 s by file, 4.5-5 s by rows).
func (t *Target) copySchema(ctx context.Context, conn *sql.Conn, from, to string) error {
	if err := t.recreate(ctx, conn, to); err != nil {
		return err
	}
	tables, err := baseTables(ctx, conn, from)
	if err != nil {
		return err
	}
	byFile, err := t.fileCopyable(ctx, conn, from)
	if err != nil {
		return err
	}
	var files []string
	for _, tb := range tables {
		q := "CREATE TABLE " + qualified(to, tb) + " LIKE " + qualified(from, tb)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		if byFile[tb] {
			files = append(files, tb)
			continue
		}
		cols, err := storedColumns(ctx, conn, from, tb)
		if err != nil {
			return err
		}
		q = "INSERT INTO " + qualified(to, tb) + " (" + cols + ") SELECT " + cols + " FROM " + qualified(from, tb)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if len(files) == 0 {
		return nil
	}
	var src []string
	for _, tb := range files {
		if _, err := conn.ExecContext(ctx, "ALTER TABLE "+qualified(to, tb)+" DISCARD TABLESPACE"); err != nil {
			return err
		}
		src = append(src, qualified(from, tb))
	}
	if _, err := conn.ExecContext(ctx, "FLUSH TABLES "+strings.Join(src, ", ")+" FOR EXPORT"); err != nil {
		return fmt.Errorf("export %s: %w", from, err)
	}
	// The data directory is the server account's, which could put links
	// in its schemas' directories: every file is opened beneath it.
	data, err := os.OpenRoot(t.Managed.DataDir)
	if err != nil {
		return err
	}
	defer data.Close()
	copied := func() error {
		for _, tb := range files {
			for _, ext := range []string{".ibd", ".cfg"} {
				if err := t.copyFile(data, filepath.Join(from, tb+ext), filepath.Join(to, tb+ext)); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	// The export's lock goes with UNLOCK TABLES, which also removes the
	// source's .cfg files.
	if _, err := conn.ExecContext(context.Background(), "UNLOCK TABLES"); err != nil && copied == nil {
		copied = err
	}
	if copied != nil {
		return copied
	}
	t.swapHook.Step("files copied")
	for _, tb := range files {
		if _, err := conn.ExecContext(ctx, "ALTER TABLE "+qualified(to, tb)+" IMPORT TABLESPACE"); err != nil {
			return fmt.Errorf("import %s.%s: %w", to, tb, err)
		}
		// The import read the .cfg file; the server leaves it behind.
		_ = data.Remove(filepath.Join(to, tb+".cfg"))
	}
	return nil
}

// plainName is a schema or table name MariaDB keeps as the same file name.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// fileCopyable names the tables of schema that copySchema can copy as
// files: InnoDB, not partitioned, without a full-text index, with a plain
// name and their own .ibd file in the data directory.
func (t *Target) fileCopyable(ctx context.Context, conn *sql.Conn, schema string) (map[string]bool, error) {
	out := map[string]bool{}
	// A file copy would be one node's alone: Galera replicates rows and
	// statements, not tablespace imports.
	if t.cluster != nil || !plainName.MatchString(schema) {
		return out, nil
	}
	rows, err := conn.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND ENGINE = 'InnoDB' AND CREATE_OPTIONS NOT LIKE '%partitioned%'
		AND TABLE_NAME NOT IN (SELECT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND INDEX_TYPE = 'FULLTEXT')`, schema, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var tb string
		if err := rows.Scan(&tb); err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(t.Managed.DataDir, schema, tb+".ibd")); err == nil && plainName.MatchString(tb) {
			out[tb] = true
		}
	}
	return out, rows.Err()
}

// copyFile copies a table's file (by copy_file_range, a reflink where the
// file system has them), durably, owned by the server's account. Both
// names are beneath data, the data directory, which nothing they hold
// (a link the server's account put there) can lead out of; the copy is
// made anew (O_EXCL), never through what was at its name.
func (t *Target) copyFile(data *os.Root, from, to string) error {
	in, err := data.OpenFile(from, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", filepath.Join(t.Managed.DataDir, from))
	}
	if err := data.Remove(to); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out, err := data.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o660)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if a := t.Managed.Account; a.UID >= 0 {
		if err := out.Chown(a.UID, a.GID); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// recreate makes schema anew, empty.
func (t *Target) recreate(ctx context.Context, conn *sql.Conn, schema string) error {
	if err := t.dropSchema(ctx, conn, schema); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, "CREATE DATABASE "+schema)
	return err
}

// dropSchema drops one of calibra's own schemas, and the files an
// interrupted copy left in its directory, which DROP DATABASE does not
// know and would refuse to remove the directory for.
func (t *Target) dropSchema(ctx context.Context, conn *sql.Conn, schema string) error {
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+schema); err != nil {
		var myErr *mysql.MySQLError
		if !errors.As(err, &myErr) || myErr.Number != 1010 { // 1010: cannot remove the directory
			return err
		}
	}
	dir := filepath.Join(t.Managed.DataDir, schema)
	if _, err := os.Lstat(dir); err != nil {
		return nil
	}
	// By handle beneath the data directory, whose parent no other
	// account can change.
	if err := safefs.RemoveAll(t.Managed.DataDir, schema); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+schema)
	return err
}

func baseTables(ctx context.Context, conn *sql.Conn, schema string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`, schema)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// storedColumns lists a table's columns other than generated ones, which
// an INSERT may not set.
func storedColumns(ctx context.Context, conn *sql.Conn, schema, table string) (string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND IS_GENERATED = 'NEVER' ORDER BY ORDINAL_POSITION`, schema, table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return "", err
		}
		cols = append(cols, quoteIdent(c))
	}
	return strings.Join(cols, ", "), rows.Err()
}

// endSessions kills the other sessions whose current database is schema:
// they would hold the metadata locks the swap waits for.
func endSessions(ctx context.Context, conn *sql.Conn, schema string) error {
	rows, err := conn.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()", schema)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		// A session that ended meanwhile is no error (1094: unknown thread).
		if _, err := conn.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10)); err != nil {
			var myErr *mysql.MySQLError
			if !errors.As(err, &myErr) || myErr.Number != 1094 {
				return err
			}
		}
	}
	return nil
}

// repair clears what an interrupted save or reset left: the staging
// schemas, and the template schema that the template row does not name
// (a half-made copy, or the old one not yet dropped). Calibra's database
// and the named template are whole at every moment, so nothing needs
// finishing. It says what it did, one sentence each.
func (t *Target) repair(ctx context.Context, db *sql.DB) ([]string, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	slot, _, exists, err := templateRow(ctx, conn)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, s := range []string{stagingNew, stagingOld, slotA, slotB} {
		if exists && s == slot {
			continue
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", s).Scan(&n); err != nil {
			return done, err
		}
		if _, err := os.Stat(filepath.Join(t.Managed.DataDir, s)); n == 0 && err != nil {
			continue
		}
		if err := t.dropSchema(ctx, conn, s); err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("dropped the schema %s, left by an interrupted template save or reset", s))
	}
	return done, nil
}

func qualified(schema, table string) string { return quoteIdent(schema) + "." + quoteIdent(table) }

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
