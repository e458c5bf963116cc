package oltppg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A split run's gates are advisory locks on the benchmark database, keyed
// by calibra's class and the gate's name: the counter partition holds one
// exclusively; the others wait for it shared, which pg_locks shows as not
// granted. Each call is one statement by the simple protocol, so one
// transaction (see Counters).
const gateClass = 0x63616c69 // "cali"

var simple = pgx.QueryExecModeSimpleProtocol

func (c *control) ShutGate(ctx context.Context, gate string) error {
	var got bool
	if err := c.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext($2))", simple, gateClass, gate).Scan(&got); err != nil {
		return err
	}
	if !got {
		return fmt.Errorf("another session holds the lock %s", gate)
	}
	return nil
}

func (c *control) AtGate(ctx context.Context, gate string) (int, error) {
	var n int
	err := c.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted AND objsubid = 2
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1::int4::oid AND objid = hashtext($2)::oid`, simple, gateClass, gate).Scan(&n)
	return n, err
}

func (c *control) OpenGate(ctx context.Context, gate string) error {
	_, err := c.conn.Exec(ctx, "SELECT pg_advisory_unlock($1, hashtext($2))", simple, gateClass, gate)
	return err
}

// PassGate takes the gate's lock shared and lets it go in one statement
// (the subquery first: OFFSET 0 keeps it apart). Where the server
// flushes statistics on demand (StatsFlush: 15 and later) it
// publishes the session's statistics first, so that what it did before
// (a second or less apart, the server holds them back) falls before the
// counter partition's read, and again with the pass, so that the pass's
// commit, which comes after that read, is in the window's end read.
func (c *control) PassGate(ctx context.Context, gate string) (before int64, err error) {
	flushes, _, err := c.StatsFlush(ctx)
	if err != nil {
		return 0, err
	}
	flush, row := "", ""
	if flushes {
		// A table read, as flushStatsSQL's, so that the flush happens.
		flush, row = ", pg_stat_force_next_flush()", ", (SELECT FROM warehouse LIMIT 1) AS w"
		if _, err := c.conn.Exec(ctx, flushStatsSQL, simple); err != nil {
			return 0, err
		}
		before = 1
	}
	_, err = c.conn.Exec(ctx, `SELECT pg_advisory_unlock_shared($1, hashtext($2))`+flush+`
		FROM (SELECT pg_advisory_lock_shared($1, hashtext($2)) OFFSET 0) AS pass`+row, simple, gateClass, gate)
	return before, err
}

func (c *control) GateXacts() int64 { return 1 }
