package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/secret"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// TargetConfig says which server to use: an existing one (DSN) or the
// managed instance under Path.
type TargetConfig struct {
	// Kind is the engine opened; PostgreSQL when empty.
	Kind           Kind
	DSN            string
	Path           string
	PGBin          string
	RunAs          string
	DBCache        string
	MaxConnections int
	ServerLog      string
	// Cgroup, when set, holds the managed server: its memory (and so its
	// page cache) and its I/O are bounded by it.
	Cgroup *limits.Cgroup
	// Settings and WALPath: see InstanceConfig.
	Settings map[string]string
	WALPath  string
	Replicas ReplicaConfig
	// DataChecksums: see InstanceConfig.
	DataChecksums bool
}

// Target is the database calibra measures, managed or not.
type Target struct {
	Managed *Instance // nil with --dsn
	// Repairs say what Start did to finish or undo a swap of the loaded
	// data that an earlier command's interruption cut short.
	Repairs  []string
	replicas *replicaSet // nil without --replicas
	conn     *pgx.ConnConfig
	Info     results.Engine
	swapHook server.SwapHook // a test's
}

// Prepare checks everything that can be checked before a run directory
// exists: binaries, the account and its access, the DSN's syntax and reach.
func Prepare(ctx context.Context, cfg TargetConfig) (*Target, error) {
	if cfg.Kind.Name == "" {
		cfg.Kind = PostgreSQL
	}
	if cfg.DSN != "" {
		if cfg.Replicas.N > 0 {
			return nil, fault.Input("drop --replicas, or drop --dsn to use the managed instance", "--replicas makes standbys of the managed instance, not of a --dsn server")
		}
		cc, err := ParseDSN(cfg.DSN)
		if err != nil {
			return nil, err
		}
		conn, err := Connect(ctx, cc)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		t := &Target{conn: cc, Info: results.Engine{Name: cfg.Kind.Name, Target: secret.RedactDSN(cfg.DSN)}}
		if t.Info.Version, t.Info.Settings, err = Describe(ctx, conn); err != nil {
			return nil, fmt.Errorf("read server settings: %w", err)
		}
		// This session closes before the command opens its own.
		var free int
		if err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
			- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') + 1`).Scan(&free); err != nil {
			return nil, fmt.Errorf("read the server's free connections: %w", err)
		}
		if err := engine.CheckConnections(free, cfg.MaxConnections); err != nil {
			return nil, err
		}
		return t, nil
	}
	bin, err := findBinaries(cfg.PGBin, cfg.Kind.BinFlag)
	if err != nil {
		return nil, err
	}
	if err := bin.CheckSettingNames(cfg.Settings); err != nil {
		return nil, err
	}
	in, err := NewInstance(InstanceConfig{Path: cfg.Path, Bin: bin, RunAs: cfg.RunAs, DBCache: cfg.DBCache,
		MaxConnections: cfg.MaxConnections, LogFile: cfg.ServerLog, Cgroup: cfg.Cgroup, Settings: cfg.Settings, WALPath: cfg.WALPath,
		Replicas: cfg.Replicas, Dirs: cfg.Kind.Dirs, DataChecksums: cfg.DataChecksums})
	if err != nil {
		return nil, err
	}
	t := &Target{Managed: in, Info: results.Engine{Name: cfg.Kind.Name, Version: bin.Version, Managed: true, Target: in.DataDir}}
	if in.cfg.Replicas.N > 0 {
		t.replicas = &replicaSet{primary: in}
	}
	return t, nil
}

// SetServerLog names the managed server's log file (in the run directory,
// which exists only after Prepare).
func (t *Target) SetServerLog(path string) {
	if t.Managed != nil {
		t.Managed.cfg.LogFile = path
	}
}

// Start initialises (first time only) and starts the managed instance and
// makes sure its database exists; with a DSN it does nothing.
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
	cc, err := pgx.ParseConfig(in.ConnString("postgres"))
	if err != nil {
		return initialised, err
	}
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return initialised, fmt.Errorf("connect to the managed instance: %w", err)
	}
	defer conn.Close(ctx)
	// Before anything commits: a standby list an earlier command left in
	// force would make every commit wait for standbys not running.
	pruned, err := settleReplication(ctx, conn, in, t.replicas)
	if err != nil {
		return initialised, err
	}
	if t.Repairs, err = repair(ctx, conn); err != nil {
		return initialised, fmt.Errorf("repair the loaded data after an interruption: %w", err)
	}
	t.Repairs = append(pruned, t.Repairs...)
	if !databaseExists(ctx, conn, Database) {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+Database); err != nil {
			return initialised, fmt.Errorf("create database %s: %w", Database, err)
		}
	}
	err = t.replicas.start(ctx, group, conn)
	if t.replicas != nil {
		t.Repairs, t.replicas.notes = append(t.Repairs, t.replicas.notes...), nil
	}
	if err != nil {
		return initialised, err
	}
	t.Info.Version, t.Info.Settings, err = Describe(ctx, conn)
	if err != nil {
		return initialised, fmt.Errorf("read server settings: %w", err)
	}
	t.Info.Replicas = t.replicas.describe()
	t.conn, err = pgx.ParseConfig(in.ConnString(Database))
	return initialised, err
}

// ErrNoRestart is Restart's answer for a server calibra does not manage.
var ErrNoRestart = errors.New("calibra cannot restart a server it does not manage (--dsn)")

// Restart is a cold start of the managed instance: stop, evict its files
// from the OS page cache (reported), start on the same address.
func (t *Target) Restart(ctx context.Context, group *proc.Group) (cacheDropped bool, err error) {
	if t.Managed == nil {
		return false, ErrNoRestart
	}
	if t.replicas == nil {
		return t.Managed.Restart(ctx, group)
	}
	// The standbys restart cold too, and the load waits until they stream.
	if err := t.replicas.stop(); err != nil {
		return false, err
	}
	dropped, err := t.Managed.Restart(ctx, group)
	if err != nil {
		return dropped, err
	}
	conn, err := t.maintenance(ctx)
	if err != nil {
		return dropped, err
	}
	defer conn.Close(context.Background())
	return dropped, t.replicas.start(ctx, group, conn)
}

// Stop stops the managed instance, if any.
func (t *Target) Stop() error {
	if t.Managed == nil {
		return nil
	}
	// The primary first: its shutdown sends the standbys its last WAL, so
	// they are current when the next command reuses them.
	return errors.Join(t.Managed.Stop(), t.replicas.stop())
}

// ConnConfig returns a fresh copy of the benchmark database's connection
// settings, to which callers add their own runtime parameters.
func (t *Target) ConnConfig() *pgx.ConnConfig { return t.conn.Copy() }

// SchemaConfig is a connection configuration working in schema, named app
// in pg_stat_activity (so the observers can tell calibra's layers apart).
func (t *Target) SchemaConfig(schema, app string) *pgx.ConnConfig {
	cc := t.ConnConfig()
	cc.RuntimeParams["search_path"] = schema
	cc.RuntimeParams["application_name"] = app
	return cc
}

// ConnectSchema opens a connection working in schema (see SchemaConfig).
func (t *Target) ConnectSchema(ctx context.Context, schema, app string) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, t.SchemaConfig(schema, app))
}

// OpenConns is engine.OpenConns for PostgreSQL connections; CloseConns
// closes them.
func OpenConns(ctx context.Context, n int, open func(context.Context) (*pgx.Conn, error)) ([]*pgx.Conn, error) {
	return engine.OpenConns(ctx, n, open)
}

// CloseConns closes connections OpenConns opened.
func CloseConns(conns []*pgx.Conn) {
	for _, c := range conns {
		c.Close(context.Background())
	}
}

// TemplateDatabase holds the managed instance's loaded copy, from which the
// benchmark database is recreated for a clean start.
const TemplateDatabase = "calibra_template"

// maintenance connects to the managed instance's postgres database, from
// which the benchmark database can be copied or dropped.
func (t *Target) maintenance(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, t.Managed.ConnString("postgres"))
}

// SaveTemplate copies the benchmark database into the template database,
// replacing an older one, and labels it with note (what it holds, read
// back by TemplateNote). Nobody may be connected to the benchmark database.
// The copy is made under a temporary name and swapped in by renames, so a
// signal at any moment leaves a complete template (see repair).
func (t *Target) SaveTemplate(ctx context.Context, note string) (string, error) {
	conn, err := t.maintenance(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	for _, name := range []string{templateNew, templateOld} {
		if err := dropDatabase(ctx, conn, name); err != nil {
			return "", err
		}
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+templateNew+" TEMPLATE "+Database+t.copyStrategy()); err != nil {
		return "", fmt.Errorf("copy the loaded database: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+templateNew+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	// A comment follows the database through its renames.
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+templateNew+" IS "+quoteLiteral(note)); err != nil {
		return "", err
	}
	t.swapHook.Step("template copied")
	if err := renameIfExists(ctx, conn, TemplateDatabase, templateOld); err != nil {
		return "", err
	}
	t.swapHook.Step("old template aside")
	if err := rename(ctx, conn, templateNew, TemplateDatabase); err != nil {
		return "", err
	}
	return TemplateDatabase, dropDatabase(ctx, conn, templateOld)
}

// TemplateNote returns the note the loaded template was saved with, and
// whether there is a template at all (a template an older calibra saved
// has an empty note).
func (t *Target) TemplateNote(ctx context.Context) (note string, exists bool, err error) {
	conn, err := t.maintenance(ctx)
	if err != nil {
		return "", false, err
	}
	defer conn.Close(context.Background())
	var n *string
	err = conn.QueryRow(ctx, "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1", TemplateDatabase).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil || n == nil {
		return "", err == nil, err
	}
	return *n, true, nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// RestoreTemplate recreates the benchmark database from the template: the
// open equivalent of a guaranteed restore point. The copy is made under a
// temporary name, and the old database dropped only once it is complete.
func (t *Target) RestoreTemplate(ctx context.Context) error {
	conn, err := t.maintenance(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if !databaseExists(ctx, conn, TemplateDatabase) {
		return fault.Input("build it again with 'calibra oltp build --rebuild', which keeps one", "there is no loaded template to reset from (a build interrupted before it kept one leaves none)")
	}
	if err := dropDatabase(ctx, conn, databaseNew); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+databaseNew+" TEMPLATE "+TemplateDatabase+t.copyStrategy()); err != nil {
		return err
	}
	t.swapHook.Step("database copied")
	if err := dropDatabase(ctx, conn, Database); err != nil {
		return err
	}
	t.swapHook.Step("old database dropped")
	return rename(ctx, conn, databaseNew, Database)
}

// The temporary names of the swaps.
const (
	templateNew = TemplateDatabase + "_new"
	templateOld = TemplateDatabase + "_old"
	databaseNew = Database + "_new"
)

// repair finishes or undoes a swap that a signal or a crash cut short, and
// drops what an interrupted DROP DATABASE left invalid, so that the loaded
// data is found again; it says what it did, one sentence each.
func repair(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	var done []string
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datconnlimit = -2 AND datname = ANY($1)",
		[]string{Database, databaseNew, TemplateDatabase, templateNew, templateOld})
	if err != nil {
		return nil, err
	}
	invalid, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	for _, name := range invalid {
		// An invalid database takes no ALTER: drop it as it is.
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return done, err
		}
		done = append(done, fmt.Sprintf("dropped the database %s, left invalid by an interrupted drop", name))
	}
	if !databaseExists(ctx, conn, TemplateDatabase) {
		for _, name := range []string{templateNew, templateOld} {
			if databaseExists(ctx, conn, name) {
				if err := rename(ctx, conn, name, TemplateDatabase); err != nil {
					return done, err
				}
				done = append(done, fmt.Sprintf("restored the loaded template from %s, left by an interrupted save", name))
				break
			}
		}
	}
	if !databaseExists(ctx, conn, Database) && databaseExists(ctx, conn, databaseNew) {
		if err := rename(ctx, conn, databaseNew, Database); err != nil {
			return done, err
		}
		done = append(done, "finished a reset from the template that was interrupted")
	}
	for _, name := range []string{templateNew, templateOld, databaseNew} {
		if databaseExists(ctx, conn, name) {
			if err := dropDatabase(ctx, conn, name); err != nil {
				return done, err
			}
		}
	}
	return done, nil
}

func databaseExists(ctx context.Context, conn *pgx.Conn, name string) bool {
	var exists bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	return err == nil && exists
}

func rename(ctx context.Context, conn *pgx.Conn, from, to string) error {
	_, err := conn.Exec(ctx, "ALTER DATABASE "+from+" RENAME TO "+to)
	return err
}

func renameIfExists(ctx context.Context, conn *pgx.Conn, from, to string) error {
	if !databaseExists(ctx, conn, from) {
		return nil
	}
	return rename(ctx, conn, from, to)
}

// copyStrategy asks for a file-level copy where the server offers the
// choice (15+): much faster than WAL-logging every block of a big database.
func (t *Target) copyStrategy() string {
	if t.Managed.cfg.Bin.Major >= 15 {
		return " STRATEGY FILE_COPY"
	}
	return ""
}

func dropDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE false"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" {
			return nil
		}
		return err
	}
	_, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
	return err
}

// ObserveConn is where an observer connects and which database it watches.
// On the managed instance it connects to the postgres database, so that it
// never blocks a reset of the benchmark database from its template.
func (t *Target) ObserveConn() (*pgx.ConnConfig, string) {
	if t.Managed == nil {
		return t.conn.Copy(), t.conn.Database
	}
	cc, err := pgx.ParseConfig(t.Managed.ConnString("postgres"))
	if err != nil {
		return nil, ""
	}
	return cc, Database
}
