package oltpmy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/oltp"
)

// control is the workload's session for everything but the transactions.
type control struct {
	conn      conn
	t         *mariadb.Target
	noMetrics string // why INNODB_METRICS cannot be read, once refused
}

func (c *control) Close() { c.conn.close() }

func (c *control) BuildInfo(ctx context.Context) (map[string]string, error) {
	var n int
	if err := c.conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'build_info'`).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := c.conn.QueryContext(ctx, "SELECT name, value FROM build_info")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// CreateSchema drops the workload's tables and procedures from calibra's
// database, whatever else it holds, and makes them anew.
func (c *control) CreateSchema(ctx context.Context) error {
	stmts := []string{"DROP TABLE IF EXISTS " + strings.Join(tables, ", ")}
	for _, p := range procedureNames {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+p)
	}
	stmts = append(stmts, tableDDL...)
	stmts = append(stmts, procedures...)
	for _, s := range stmts {
		if _, err := c.conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}

func (c *control) RecordBuild(ctx context.Context, info map[string]string) error {
	for k, v := range info {
		if _, err := c.conn.ExecContext(ctx, "INSERT INTO build_info (name, value) VALUES (?, ?)", k, v); err != nil {
			return err
		}
	}
	return nil
}

func (c *control) Ints(ctx context.Context, query string) ([][]int64, error) {
	rows, err := c.conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(cols))
		if err := rows.Scan(oltp.Dest(row)...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// StatsFlush: performance_schema sums a user's transactions over its live
// sessions when read, so nothing waits to be published; without it the
// count is the server's engine commits, every account's.
func (c *control) StatsFlush(context.Context) (bool, string, error) {
	if c.t.ExactTransactions() {
		return false, "", nil
	}
	return false, "this server does not count transactions in performance_schema: tpm_db is every account's Handler_commit + Handler_rollback, " +
		"which InnoDB also counts for each statement inside a transaction (an upper bound)", nil
}

// Counters reads sum(d_next_o_id), calibra's transactions and InnoDB's
// checkpoints in one statement: one transaction of calibra's own.
// InnoDB counts checkpoints only with the log_checkpoints monitor on (the
// managed instance turns it on); its checkpoints are fuzzy and frequent,
// not PostgreSQL's periodic ones.
//
// INNODB_METRICS needs the PROCESS privilege: an account without it (a
// --dsn's) is refused the read once, and its checkpoints then go uncounted
// with the reason.
func (c *control) Counters(ctx context.Context, _ bool) (oltp.Counters, error) {
	tx, args := c.t.TransactionsQuery()
	metrics := `(SELECT MAX(COUNT) FROM information_schema.INNODB_METRICS WHERE NAME = 'log_checkpoints' AND ENABLED = 1)`
	if c.noMetrics != "" {
		metrics = "NULL"
	}
	q := `SELECT (SELECT COALESCE(sum(d_next_o_id), 0) FROM district), ` + tx + `, ` + metrics
	var n oltp.Counters
	var checkpoints sql.NullInt64
	err := c.conn.QueryRowContext(ctx, q, args...).Scan(&n.SumNextOID, &n.Xacts, &checkpoints)
	if e, ok := mysqlErr(err); ok && e.Number == errSpecificAccessDenied && c.noMetrics == "" {
		c.noMetrics = "this account may not read InnoDB's checkpoint count (information_schema.INNODB_METRICS needs the PROCESS privilege)"
		return c.Counters(ctx, false)
	}
	if err != nil {
		return n, err
	}
	n.Checkpoints = checkpoints.Int64
	switch {
	case c.noMetrics != "":
		n.NoCheckpoints = c.noMetrics
	case !checkpoints.Valid:
		n.NoCheckpoints = "InnoDB counts its checkpoints only with the log_checkpoints monitor on (innodb_monitor_enable), which this server has off"
	}
	return n, c.clusterSize(ctx)
}

// errSpecificAccessDenied is MariaDB's ER_SPECIFIC_ACCESS_DENIED_ERROR:
// a statement needs a privilege the account lacks.
const errSpecificAccessDenied = 1227

// clusterSize fails a window edge at which a Galera node counts more
// members in its cluster than calibra started: a server calibra did not
// start took part in what was measured.
func (c *control) clusterSize(ctx context.Context) error {
	if c.t == nil || !c.t.GaleraNode() {
		return nil
	}
	var size int
	if err := c.conn.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'").Scan(&size); err != nil {
		return fmt.Errorf("read the Galera cluster's size: %w", err)
	}
	if n := len(c.t.Cluster().Nodes()); size > n {
		return fmt.Errorf("the Galera cluster counted %d members, more than the %d nodes calibra started: a server calibra did not start joined it", size, n)
	}
	return nil
}

// Checkpoint writes every dirty page of the workload's tables to their
// files: MariaDB has no CHECKPOINT statement, but an export flushes the
// tables it locks.
func (c *control) Checkpoint(ctx context.Context) error {
	if _, err := c.conn.ExecContext(ctx, "FLUSH TABLES "+strings.Join(tables, ", ")+" FOR EXPORT"); err != nil {
		return err
	}
	_, err := c.conn.ExecContext(ctx, "UNLOCK TABLES")
	return err
}
