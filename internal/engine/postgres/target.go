package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/secret"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// TargetConfig says which server to use: an existing one (DSN) or the
// managed instance under Path.
type TargetConfig struct {
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
}

// Target is the database calibra measures, managed or not.
type Target struct {
	Managed *Instance // nil with --dsn
	conn    *pgx.ConnConfig
	Info    results.Engine
}

// Prepare checks everything that can be checked before a run directory
// exists: binaries, the account and its access, the DSN's syntax and reach.
func Prepare(ctx context.Context, cfg TargetConfig) (*Target, error) {
	if cfg.DSN != "" {
		cc, err := ParseDSN(cfg.DSN)
		if err != nil {
			return nil, err
		}
		conn, err := Connect(ctx, cc)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		t := &Target{conn: cc, Info: results.Engine{Name: "postgresql", Target: secret.RedactDSN(cfg.DSN)}}
		if t.Info.Version, t.Info.Settings, err = Describe(ctx, conn); err != nil {
			return nil, fmt.Errorf("read server settings: %w", err)
		}
		return t, nil
	}
	bin, err := FindBinaries(cfg.PGBin)
	if err != nil {
		return nil, err
	}
	in, err := NewInstance(InstanceConfig{Path: cfg.Path, Bin: bin, RunAs: cfg.RunAs, DBCache: cfg.DBCache,
		MaxConnections: cfg.MaxConnections, LogFile: cfg.ServerLog, Cgroup: cfg.Cgroup})
	if err != nil {
		return nil, err
	}
	return &Target{Managed: in, Info: results.Engine{Name: "postgresql", Version: bin.Version, Managed: true, Target: in.DataDir}}, nil
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
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", Database).Scan(&exists); err != nil {
		return initialised, err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+Database); err != nil {
			return initialised, fmt.Errorf("create database %s: %w", Database, err)
		}
	}
	t.Info.Version, t.Info.Settings, err = Describe(ctx, conn)
	if err != nil {
		return initialised, fmt.Errorf("read server settings: %w", err)
	}
	t.conn, err = pgx.ParseConfig(in.ConnString(Database))
	return initialised, err
}

// ErrNoRestart is Restart's answer for a server calibra does not manage.
var ErrNoRestart = errors.New("calibra cannot restart a server it does not manage (--dsn)")

// Restart is a cold start of the managed instance: stop, drop the OS page
// cache where permitted (reported), start on the same address.
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

// OpenConns opens n connections with open, returning those it opened also
// when one fails; CloseConns closes them.
func OpenConns(ctx context.Context, n int, open func(context.Context) (*pgx.Conn, error)) ([]*pgx.Conn, error) {
	conns := make([]*pgx.Conn, 0, n)
	for range n {
		c, err := open(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
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
// replacing an older one. Nobody may be connected to the benchmark database.
func (t *Target) SaveTemplate(ctx context.Context) (string, error) {
	conn, err := t.maintenance(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	if err := dropDatabase(ctx, conn, TemplateDatabase); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+TemplateDatabase+" TEMPLATE "+Database+t.copyStrategy()); err != nil {
		return "", fmt.Errorf("copy the loaded database: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+TemplateDatabase+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	return TemplateDatabase, nil
}

// RestoreTemplate recreates the benchmark database from the template: the
// open equivalent of a guaranteed restore point.
func (t *Target) RestoreTemplate(ctx context.Context) error {
	conn, err := t.maintenance(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", TemplateDatabase).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fault.Input("build it with 'calibra oltp build'", "there is no loaded template to reset from")
	}
	if err := dropDatabase(ctx, conn, Database); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+Database+" TEMPLATE "+TemplateDatabase+t.copyStrategy())
	return err
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
