// Package dsspg is PostgreSQL's part of the dss workload: its sessions,
// COPY loads, vacuums, statement timeouts and the refresh functions as
// single statements.
package dsspg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
)

func init() {
	engine.RegisterFor(dss.Dialects, postgres.Name, func(t *postgres.Target) (dss.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *postgres.Target }

// app names the sessions in pg_stat_activity, so the observers can tell
// calibra's layers apart.
const app = "calibra dss"

func (d dialect) Connect(ctx context.Context, dop int) (dss.Conn, error) {
	cc := d.t.SchemaConfig(dss.Schema, app)
	if dop >= 0 {
		cc.RuntimeParams["max_parallel_workers_per_gather"] = strconv.Itoa(dop)
	}
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

func (d dialect) FinishLoad(ctx context.Context, conns []dss.Conn, ddl []string, phase func(string)) (dss.LoadTail, error) {
	pgConns := make([]*pgx.Conn, len(conns))
	for i, c := range conns {
		pgConns[i] = c.(conn).Conn
	}
	var vacuums []string
	for _, tb := range dss.Tables() {
		vacuums = append(vacuums, "VACUUM (ANALYZE) "+tb)
	}
	tail, err := postgres.FinishLoad(ctx, pgConns, dss.Schema, ddl, vacuums, phase)
	return dss.LoadTail{IndexS: tail.IndexS, AnalyzeS: tail.VacuumS, Bytes: tail.Bytes}, err
}

// Query is the reference text: it is PostgreSQL's.
func (dialect) Query(_ int, text string) string { return text }

func (dialect) TimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "57014" // query_canceled: the statement timeout
}

type conn struct{ *pgx.Conn }

func (c conn) Close() { c.Conn.Close(context.Background()) }

func (c conn) Exec(ctx context.Context, sql string) (int64, error) {
	tag, err := c.Conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}

// Rows reads the rows in the text format, straight off the wire.
func (c conn) Rows(ctx context.Context, sql string, each func([][]byte)) error {
	rr := c.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil)
	for rr.NextRow() {
		each(rr.Values())
	}
	_, err := rr.Close()
	return err
}

func (c conn) HasTable(ctx context.Context, table string) (bool, error) {
	var exists bool
	err := c.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, dss.Schema+"."+table).Scan(&exists)
	return exists, err
}

func (c conn) ResetSchema(ctx context.Context) error {
	for _, s := range []string{"DROP SCHEMA IF EXISTS " + dss.Schema + " CASCADE", "CREATE SCHEMA " + dss.Schema} {
		if _, err := c.Conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Load COPYs the rows in COPY's text format, which .tbl is but for each
// line's closing delimiter.
func (c conn) Load(ctx context.Context, table string, tbl io.Reader) (int64, error) {
	tag, err := c.PgConn().CopyFrom(ctx, newTblReader(tbl), "COPY "+table+" FROM STDIN (DELIMITER '|')")
	return tag.RowsAffected(), err
}

// parallelSettings are the server settings that make the degree of
// parallelism.
var parallelSettings = []string{"max_parallel_workers_per_gather", "max_parallel_workers", "max_worker_processes", "work_mem"}

func (c conn) Parallelism(ctx context.Context) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range parallelSettings {
		var v string
		if err := c.QueryRow(ctx, "SHOW "+s).Scan(&v); err != nil {
			return nil, err
		}
		m[s] = v
	}
	return m, nil
}

func (c conn) SetTimeout(ctx context.Context, d time.Duration) error {
	_, err := c.Conn.Exec(ctx, "SET statement_timeout = "+strconv.FormatInt(d.Milliseconds(), 10))
	return err
}

// RF1 is one statement, so one transaction: writable common table
// expressions insert the orders and their lines, and the statement counts
// both, as the interface says (and MariaDB's dialect does).
func (c conn) RF1(ctx context.Context, shift, n int64) (int64, error) {
	var rows int64
	err := c.QueryRow(ctx, fmt.Sprintf(`WITH src AS (
		SELECT o_orderkey FROM orders o
		WHERE NOT EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[1]d)
		ORDER BY o_orderkey LIMIT %[2]d),
	new_orders AS (
		INSERT INTO orders (o_orderkey, %[3]s)
		SELECT o.o_orderkey + %[1]d, %[3]s FROM orders o JOIN src USING (o_orderkey) RETURNING 1),
	new_lines AS (
		INSERT INTO lineitem (l_orderkey, %[4]s)
		SELECT l_orderkey + %[1]d, %[4]s FROM lineitem JOIN src ON l_orderkey = src.o_orderkey RETURNING 1)
	SELECT (SELECT count(*) FROM new_orders) + (SELECT count(*) FROM new_lines)`,
		shift, n, dss.OrderColumns, dss.LineColumns)).Scan(&rows)
	return rows, err
}

// DeleteCopied is one statement, as RF1.
func (c conn) DeleteCopied(ctx context.Context, shift, n int64) (int64, error) {
	limit := ""
	if n > 0 {
		limit = fmt.Sprintf("LIMIT %d", n)
	}
	return c.Exec(ctx, fmt.Sprintf(`WITH victim AS (
		SELECT o_orderkey FROM orders o
		WHERE EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[1]d)
		ORDER BY o_orderkey %[2]s),
	gone AS (DELETE FROM orders WHERE o_orderkey IN (SELECT o_orderkey FROM victim) RETURNING 1)
	DELETE FROM lineitem WHERE l_orderkey IN (SELECT o_orderkey FROM victim)`,
		shift, limit))
}

// CheckRights: a build makes the workload's schema.
func (d dialect) CheckRights(ctx context.Context) error { return d.t.CheckCreate(ctx, dss.Schema) }
