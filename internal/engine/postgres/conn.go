package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/secret"
)

// ParseDSN parses a URL or key=value DSN, turning a malformed one into an
// input error that never repeats the password.
func ParseDSN(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fault.Input("write it as postgres://user:password@host:port/db or 'host=... user=... dbname=...'",
			"the --dsn %s cannot be parsed", secret.RedactDSN(dsn))
	}
	// libpq waits forever for a host that drops packets; a DSN can still
	// set connect_timeout.
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = defaultConnectTimeout
	}
	return cfg, nil
}

// defaultConnectTimeout bounds each connection attempt to an existing
// server whose DSN sets none.
const defaultConnectTimeout = 30 * time.Second

// Connect opens one connection and explains a failure in one sentence, with
// the password never printed.
func Connect(ctx context.Context, cfg *pgx.ConnConfig) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	where := fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return nil, fault.Input("check the user, and the password (PGPASSWORD, ~/.pgpass or --dsn-file), and the server's pg_hba.conf",
				"PostgreSQL refused the login of %s", where)
		case "3D000":
			return nil, fault.Input("create the database or name an existing one in --dsn",
				"the database %q does not exist on %s:%d", cfg.Database, cfg.Host, cfg.Port)
		}
	}
	socketDir := ""
	if strings.HasPrefix(cfg.Host, "/") {
		socketDir = cfg.Host
	}
	why, fix := engine.Unreachable(err, cfg.Password, socketDir)
	return nil, fault.Input(fix, "cannot connect to %s: %s", where, why)
}

// Describe returns the server version and every setting not at its
// default (and io_method, which decides how reads are issued), each as
// SHOW gives it, in its real unit ("128MB", not setting
// and unit glued into "163848kB").
func Describe(ctx context.Context, conn *pgx.Conn) (string, map[string]string, error) {
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return "", nil, err
	}
	// io_method (18+) at its default too: two runs with and without
	// --engine-setting io_method=worker then compare as the same.
	rows, err := conn.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE (source NOT IN ('default', 'override') OR name = 'io_method') AND name NOT LIKE 'lc\_%' ORDER BY name`)
	if err != nil {
		return "", nil, err
	}
	settings := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return "", nil, err
		}
		settings[k] = v
	}
	return version, settings, rows.Err()
}

// ParallelExec runs each statement on the first free connection: index
// builds and vacuums after a bulk load.
func ParallelExec(ctx context.Context, conns []*pgx.Conn, stmts []string) error {
	return OnConns(ctx, conns, stmts, func(ctx context.Context, _ int, conn *pgx.Conn, s string) error {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		return nil
	})
}

// LoadTail is what follows a bulk load and how long each part took.
type LoadTail struct {
	IndexS, VacuumS float64
	Bytes           int64 // the schema's tables with their indexes and TOAST
}

// FinishLoad is what follows a bulk load: keys and indexes, then vacuums,
// each spread over the connections, then the schema's size on disk. phase
// announces each part.
func FinishLoad(ctx context.Context, conns []*pgx.Conn, schema string, indexDDL, vacuums []string, phase func(string)) (LoadTail, error) {
	var tail LoadTail
	phase("adding keys and indexes")
	t0 := time.Now()
	if err := ParallelExec(ctx, conns, indexDDL); err != nil {
		return tail, fmt.Errorf("create indexes: %w", err)
	}
	tail.IndexS = time.Since(t0).Seconds()
	phase("vacuum and analyze")
	t0 = time.Now()
	if err := ParallelExec(ctx, conns, vacuums); err != nil {
		return tail, fmt.Errorf("vacuum: %w", err)
	}
	tail.VacuumS = time.Since(t0).Seconds()
	err := conns[0].QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, schema).Scan(&tail.Bytes)
	return tail, err
}

// OnConns is engine.OnConns on PostgreSQL connections.
func OnConns[J any](ctx context.Context, conns []*pgx.Conn, jobs []J, do func(ctx context.Context, w int, conn *pgx.Conn, j J) error) error {
	return engine.OnConns(ctx, conns, jobs, do)
}
