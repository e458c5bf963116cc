// Package dssmy is MariaDB's part of the dss workload: its sessions, LOAD
// DATA loads, statistics, statement timeouts, the refresh functions as
// transactions, and the queries in MariaDB's dialect.
package dssmy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/fault"
)

func init() {
	engine.RegisterFor(dss.Dialects, mariadb.Name, func(t *mariadb.Target) (dss.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *mariadb.Target }

// app names the sessions in performance_schema's connection attributes,
// so the observers can tell calibra's layers apart.
const app = "calibra dss"

// database is the workload's schema: a database beside calibra's, as
// MariaDB has no schemas within one. The TPC-C-like tables in calibra's
// database have names of their own (customer, orders) and ResetSchema
// drops the whole database, so the two cannot share one.
func database(cfg *mysql.Config) string { return cfg.DBName + "_tpch" }

func (d dialect) Connect(ctx context.Context, dop int) (dss.Conn, error) {
	if dop > 0 {
		return nil, fault.Input("pass --dop 0, or -1 for the server's setting",
			"MariaDB runs each query on one thread: --dop %d cannot be honoured", dop)
	}
	cfg := d.t.Config()
	cfg.ParseTime = false // dates as text, as the answers compare them
	cfg.ConnectionAttributes = "program_name:" + app
	db := mariadb.Open(cfg)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	cn := &conn{db: db, c: c, schema: database(cfg)}
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&cn.id); err != nil {
		cn.Close()
		return nil, err
	}
	// ANSI_QUOTES reads the workload's "key" as a name, as standard SQL
	// does; InnoDB whatever the server's default engine.
	if _, err := c.ExecContext(ctx, `SET SESSION sql_mode = IF(@@sql_mode = '', 'ANSI_QUOTES', CONCAT(@@sql_mode, ',ANSI_QUOTES')),
		default_storage_engine = InnoDB`); err != nil {
		cn.Close()
		return nil, err
	}
	// Before the first build there is no database to work in yet.
	if _, err := c.ExecContext(ctx, "USE "+quoteIdent(cn.schema)); err != nil && !isError(err, 1049) {
		cn.Close()
		return nil, err
	}
	return cn, nil
}

// isError says whether err is the server's error number n.
func isError(err error, n uint16) bool {
	var myErr *mysql.MySQLError
	return errors.As(err, &myErr) && myErr.Number == n
}

// FinishLoad runs each table's keys and indexes in order on one session,
// the tables spread over the sessions: InnoDB rebuilds a table to add its
// primary key, so an index added before it would be built twice, and the
// statements on one table would only wait for each other's locks.
func (d dialect) FinishLoad(ctx context.Context, conns []dss.Conn, ddl []string, phase func(string)) (dss.LoadTail, error) {
	var tail dss.LoadTail
	phase("adding keys and indexes")
	t0 := time.Now()
	jobs, err := byTable(ddl)
	if err != nil {
		return tail, err
	}
	if err := engine.OnConns(ctx, conns, jobs, func(ctx context.Context, _ int, c dss.Conn, stmts []string) error {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}); err != nil {
		return tail, fmt.Errorf("create indexes: %w", err)
	}
	tail.IndexS = time.Since(t0).Seconds()

	// PERSISTENT FOR ALL adds the engine-independent statistics (column
	// histograms) beside InnoDB's sampled ones; MariaDB's optimizer uses
	// them for the queries' range predicates, as PostgreSQL's ANALYZE
	// gives its planner. MySQL has no such clause (1064): InnoDB's alone.
	phase("analyze")
	t0 = time.Now()
	if err := engine.OnConns(ctx, conns, dss.Tables(), func(ctx context.Context, _ int, c dss.Conn, table string) error {
		err := analyze(ctx, c, "ANALYZE TABLE "+table+" PERSISTENT FOR ALL")
		if isError(err, 1064) {
			err = analyze(ctx, c, "ANALYZE TABLE "+table)
		}
		if err != nil {
			return fmt.Errorf("analyze %s: %w", table, err)
		}
		return nil
	}); err != nil {
		return tail, err
	}
	tail.AnalyzeS = time.Since(t0).Seconds()
	c := conns[0].(*conn)
	err = c.c.QueryRowContext(ctx, `SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE'`, c.schema).Scan(&tail.Bytes)
	return tail, err
}

// analyze runs an ANALYZE TABLE, which reports a failure as a row.
func analyze(ctx context.Context, c dss.Conn, stmt string) error {
	var failed string
	err := c.Rows(ctx, stmt, func(v [][]byte) {
		if string(v[2]) == "error" {
			failed = string(v[3])
		}
	})
	if err == nil && failed != "" {
		err = errors.New(failed)
	}
	return err
}

// ddlTable is the table an ALTER TABLE or CREATE INDEX statement changes.
var ddlTable = regexp.MustCompile(`^(?:ALTER TABLE (\w+)|CREATE (?:UNIQUE )?INDEX \w+ ON (\w+))`)

// byTable groups the statements by the table they change, in their order.
func byTable(ddl []string) ([][]string, error) {
	var out [][]string
	at := map[string]int{}
	for _, s := range ddl {
		m := ddlTable.FindStringSubmatch(s)
		if m == nil {
			return nil, fmt.Errorf("dssmy: no table in %q", s)
		}
		table := m[1] + m[2]
		i, ok := at[table]
		if !ok {
			i = len(out)
			at[table] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	return out, nil
}

// Query is the reference text with PostgreSQL's interval arithmetic in
// MariaDB's: interval '3 month' is interval 3 month, and a date minus a
// number of days (Q1) subtracts an interval, where MariaDB would subtract
// the number from the date read as one (19981201 - 90). Everything else
// in the 22 (extract, substring ... from ... for, the common table
// expression of Q15, the outer join of Q13) MariaDB reads as written.
func (dialect) Query(_ int, text string) string {
	text = pgInterval.ReplaceAllString(text, "interval $1 $2")
	return dateMinusDays.ReplaceAllString(text, "$1 - interval $2 day")
}

var (
	pgInterval    = regexp.MustCompile(`interval '(\d+) (day|month|year)s?'`)
	dateMinusDays = regexp.MustCompile(`(date '\d{4}-\d{2}-\d{2}') - (\d+)\b`)
)

// TimedOut knows MariaDB's max_statement_time (1969) and MySQL's
// max_execution_time (3024).
func (dialect) TimedOut(err error) bool { return isError(err, 1969) || isError(err, 3024) }

// conn is one session, pinned for its session state (the database in
// use, the timeout, the refresh functions' key table).
type conn struct {
	db     *sql.DB
	c      *sql.Conn
	schema string
	id     int64 // the server's thread, for KILL QUERY
}

// killOnCancel stops the session's statement on the server when ctx ends
// before stop is called: the driver only closes the socket, and the
// server would run a long query to its end (an interrupted stream on a
// --dsn server, or the other streams after one failed).
func (c *conn) killOnCancel(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Over another of the pool's connections; a statement that has
		// ended meanwhile is no matter (1094, unknown thread).
		_, _ = c.db.ExecContext(kctx, "KILL QUERY "+strconv.FormatInt(c.id, 10))
	})
}

func (c *conn) Close() {
	c.c.Close()
	c.db.Close()
}

func (c *conn) Exec(ctx context.Context, query string) (int64, error) {
	defer c.killOnCancel(ctx)()
	res, err := c.c.ExecContext(ctx, query)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Rows reads the rows as the text protocol sends them: a statement
// without arguments is not prepared.
func (c *conn) Rows(ctx context.Context, query string, each func([][]byte)) error {
	defer c.killOnCancel(ctx)()
	rows, err := c.c.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	vals := make([][]byte, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, r := range raw {
			vals[i] = r
		}
		each(vals)
	}
	return rows.Err()
}

func (c *conn) HasTable(ctx context.Context, table string) (bool, error) {
	var n int
	err := c.c.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
		c.schema, table).Scan(&n)
	return n > 0, err
}

// ResetSchema makes the database anew. Its text compares byte by byte
// (latin1_bin), as PostgreSQL's C collation and DuckDB do: the server's
// utf8mb4_general_ci would make Q16's LIKE '%Customer%Complaints%' blind
// to case, and dbgen's text is ASCII.
func (c *conn) ResetSchema(ctx context.Context) error {
	for _, s := range []string{"DROP DATABASE IF EXISTS " + quoteIdent(c.schema),
		"CREATE DATABASE " + quoteIdent(c.schema) + " CHARACTER SET latin1 COLLATE latin1_bin",
		"USE " + quoteIdent(c.schema)} {
		if _, err := c.c.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// loads numbers the reader handlers, which the driver keeps in one
// process-wide table.
var loads atomic.Int64

// Load streams the rows to LOAD DATA LOCAL INFILE through a reader
// handler: .tbl is its format with '|' closing each field, the last one
// too. Backslashes are data (dbgen writes none). LOCAL turns a row the
// server cannot take into a warning, so any warning fails the load.
func (c *conn) Load(ctx context.Context, table string, tbl io.Reader) (int64, error) {
	name := "calibra-dss-" + strconv.FormatInt(loads.Add(1), 10)
	// Hidden from the driver, which would close a ReadCloser it was given.
	mysql.RegisterReaderHandler(name, func() io.Reader { return struct{ io.Reader }{tbl} })
	defer mysql.DeregisterReaderHandler(name)
	n, err := c.Exec(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+
		` CHARACTER SET latin1 FIELDS TERMINATED BY '|' ESCAPED BY '' LINES TERMINATED BY '|\n'`)
	// MariaDB 4166, MySQL 3948 and older servers 1148: the server's
	// local_infile is OFF (the managed instance keeps MariaDB's ON).
	if isError(err, 4166) || isError(err, 3948) || isError(err, 1148) {
		return n, fault.Input("run SET GLOBAL local_infile = ON on the server, or start it with --local-infile",
			"the server refuses LOAD DATA LOCAL INFILE, with which calibra loads the TPC-H-like tables")
	}
	if err != nil {
		return n, err
	}
	var level, msg string
	var code int
	switch err := c.c.QueryRowContext(ctx, "SHOW WARNINGS LIMIT 1").Scan(&level, &code, &msg); {
	case errors.Is(err, sql.ErrNoRows):
		return n, nil
	case err != nil:
		return n, err
	}
	return n, fmt.Errorf("load %s: %s %d: %s", table, level, code, msg)
}

// Parallelism says that MariaDB has none within a query, and records the
// per-session memory that bounds a query's sorts, joins and temporary
// tables (PostgreSQL's work_mem).
func (c *conn) Parallelism(ctx context.Context) (map[string]string, error) {
	m := map[string]string{"query_parallelism": "none: MariaDB runs each query on one thread"}
	var sort, join, tmp, heap string
	if err := c.c.QueryRowContext(ctx, "SELECT @@sort_buffer_size, @@join_buffer_size, @@tmp_table_size, @@max_heap_table_size").
		Scan(&sort, &join, &tmp, &heap); err != nil {
		return nil, err
	}
	m["sort_buffer_size"], m["join_buffer_size"], m["tmp_table_size"], m["max_heap_table_size"] = sort, join, tmp, heap
	return m, nil
}

// SetTimeout sets MariaDB's max_statement_time, or MySQL's
// max_execution_time where the server has no such variable (1193).
func (c *conn) SetTimeout(ctx context.Context, d time.Duration) error {
	_, err := c.c.ExecContext(ctx, "SET SESSION max_statement_time = "+strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
	if isError(err, 1193) {
		_, err = c.c.ExecContext(ctx, "SET SESSION max_execution_time = "+strconv.FormatInt(d.Milliseconds(), 10))
	}
	return err
}

// keys is the session's temporary table of the order keys a refresh
// function moves: MariaDB has no writable common table expression, and
// the orders' copies must be found again for their lines.
const keys = "calibra_rf_keys"

// RF1 copies the orders, then their lines, in one transaction, and
// returns the rows inserted, orders and lines.
func (c *conn) RF1(ctx context.Context, shift, n int64) (int64, error) {
	inserted, err := c.refresh(ctx, fmt.Sprintf(`INSERT INTO %[1]s SELECT o_orderkey FROM orders o
		WHERE NOT EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[2]d)
		ORDER BY o_orderkey LIMIT %[3]d`, keys, shift, n),
		fmt.Sprintf(`INSERT INTO orders (o_orderkey, %[3]s)
		SELECT o.o_orderkey + %[2]d, %[3]s FROM orders o JOIN %[1]s k ON k.o_orderkey = o.o_orderkey`, keys, shift, dss.OrderColumns),
		fmt.Sprintf(`INSERT INTO lineitem (l_orderkey, %[3]s)
		SELECT l_orderkey + %[2]d, %[3]s FROM lineitem JOIN %[1]s k ON k.o_orderkey = l_orderkey`, keys, shift, dss.LineColumns))
	return inserted.orders + inserted.lines, err
}

// DeleteCopied deletes the orders, then their lines, in one transaction,
// and returns the lines deleted.
func (c *conn) DeleteCopied(ctx context.Context, shift, n int64) (int64, error) {
	limit := ""
	if n > 0 {
		limit = fmt.Sprintf("LIMIT %d", n)
	}
	deleted, err := c.refresh(ctx, fmt.Sprintf(`INSERT INTO %[1]s SELECT o_orderkey FROM orders o
		WHERE EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[2]d)
		ORDER BY o_orderkey %[3]s`, keys, shift, limit),
		"DELETE o FROM orders o JOIN "+keys+" k ON k.o_orderkey = o.o_orderkey",
		"DELETE l FROM lineitem l JOIN "+keys+" k ON k.o_orderkey = l.l_orderkey")
	return deleted.lines, err
}

type changed struct{ orders, lines int64 }

// refresh fills the key table with pick, then runs the orders' and the
// lines' statements, all in one transaction.
func (c *conn) refresh(ctx context.Context, pick, orders, lines string) (changed, error) {
	var ch changed
	if _, err := c.c.ExecContext(ctx, "CREATE TEMPORARY TABLE IF NOT EXISTS "+keys+" (o_orderkey bigint PRIMARY KEY) ENGINE=InnoDB"); err != nil {
		return ch, err
	}
	tx, err := c.c.BeginTx(ctx, nil)
	if err != nil {
		return ch, err
	}
	defer tx.Rollback()
	for _, s := range []struct {
		sql string
		n   *int64
	}{{"DELETE FROM " + keys, nil}, {pick, nil}, {orders, &ch.orders}, {lines, &ch.lines}} {
		res, err := tx.ExecContext(ctx, s.sql)
		if err != nil {
			return changed{}, err
		}
		if s.n != nil {
			if *s.n, err = res.RowsAffected(); err != nil {
				return changed{}, err
			}
		}
	}
	return ch, tx.Commit()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// CheckRights: a build makes its database beside the DSN's.
func (d dialect) CheckRights(ctx context.Context) error {
	return d.t.CheckGrants(ctx, database(d.t.Config()), mariadb.Privileges, nil, "dss build makes its tables in")
}
