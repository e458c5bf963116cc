package oltpmy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"
)

// A split run's gates are MariaDB's named locks (GET_LOCK): the counter
// partition holds one; the others wait for it in a GET_LOCK naming it,
// which the process list shows while it waits (the name goes into the
// statement's text for that).
func quoted(gate string) string { return "'" + strings.ReplaceAll(gate, "'", "''") + "'" }

func (c *control) ShutGate(ctx context.Context, gate string) error {
	var got int
	if err := c.conn.QueryRowContext(ctx, "SELECT GET_LOCK("+quoted(gate)+", 0)").Scan(&got); err != nil {
		return err
	}
	if got != 1 {
		return fmt.Errorf("another session holds the lock %s", gate)
	}
	return nil
}

func (c *control) AtGate(ctx context.Context, gate string) (int, error) {
	var n int
	err := c.conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE ID <> CONNECTION_ID() AND COMMAND = 'Query' AND INFO LIKE ?`, "%GET_LOCK("+quoted(gate)+"%").Scan(&n)
	return n, err
}

func (c *control) OpenGate(ctx context.Context, gate string) error {
	_, err := c.conn.ExecContext(ctx, "SELECT RELEASE_LOCK("+quoted(gate)+")")
	return err
}

// PassGate takes the gate's lock, waiting up to ctx's deadline, and lets
// it go, in one statement: the others pass one after the other.
func (c *control) PassGate(ctx context.Context, gate string) (before int64, err error) {
	wait := 3600.0
	if d, ok := ctx.Deadline(); ok {
		wait = math.Max(1, math.Ceil(time.Until(d).Seconds()))
	}
	var got int
	var released sql.NullInt64
	q := fmt.Sprintf("SELECT GET_LOCK(%s, %.0f), RELEASE_LOCK(%[1]s)", quoted(gate), wait)
	if err := c.conn.QueryRowContext(ctx, q).Scan(&got, &released); err != nil {
		return 0, err
	}
	if got != 1 {
		return 0, fmt.Errorf("the lock %s was not released within %.0f s", gate, wait)
	}
	return 0, nil
}

// GateXacts: performance_schema counts each statement as a transaction;
// the handler counters, without it, count none that reads no InnoDB
// table.
func (c *control) GateXacts() int64 {
	if c.t != nil && c.t.ExactTransactions() {
		return 1
	}
	return 0
}
