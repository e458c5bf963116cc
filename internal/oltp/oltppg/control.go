package oltppg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// control is the workload's session for everything but the transactions.
type control struct {
	conn    *pgx.Conn
	version int // server_version_num, read on first need
}

func (c *control) Close() { c.conn.Close(context.Background()) }

func (c *control) BuildInfo(ctx context.Context) (map[string]string, error) {
	var exists bool
	if err := c.conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, oltp.Schema+".build_info").Scan(&exists); err != nil {
		return nil, err
	}
	if !exists {
		return nil, nil
	}
	rows, err := c.conn.Query(ctx, "SELECT key, value FROM build_info")
	if err != nil {
		return nil, err
	}
	kv, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var k, v string
		err := r.Scan(&k, &v)
		return [2]string{k, v}, err
	})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, p := range kv {
		m[p[0]] = p[1]
	}
	return m, nil
}

func (c *control) CreateSchema(ctx context.Context) error {
	var exists bool
	if err := c.conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", oltp.Schema).Scan(&exists); err != nil {
		return err
	}
	if exists {
		if _, err := c.conn.Exec(ctx, "DROP SCHEMA "+oltp.Schema+" CASCADE"); err != nil {
			return fmt.Errorf("drop the old schema: %w", err)
		}
	}
	stmts := append([]string{"CREATE SCHEMA " + oltp.Schema}, tableDDL...)
	stmts = append(stmts, statisticsDDL()...)
	stmts = append(stmts, functionDDL...)
	for _, s := range stmts {
		if _, err := c.conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	}
	return nil
}

func (c *control) RecordBuild(ctx context.Context, info map[string]string) error {
	for k, v := range info {
		if _, err := c.conn.Exec(ctx, "INSERT INTO build_info (key, value) VALUES ($1, $2)", k, v); err != nil {
			return err
		}
	}
	return nil
}

func (c *control) Ints(ctx context.Context, query string) ([][]int64, error) {
	rows, err := c.conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]int64
	for rows.Next() {
		row := make([]int64, len(rows.FieldDescriptions()))
		if err := rows.Scan(oltp.Dest(row)...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (c *control) serverVersion(ctx context.Context) (int, error) {
	if c.version == 0 {
		if err := c.conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&c.version); err != nil {
			return 0, err
		}
	}
	return c.version, nil
}

// StatsFlush: a backend publishes its statistics up to 10 s late unless
// told to, with pg_stat_force_next_flush, which came in PostgreSQL 15.
func (c *control) StatsFlush(ctx context.Context) (bool, string, error) {
	v, err := c.serverVersion(ctx)
	if err != nil || v >= 150000 {
		return err == nil, "", err
	}
	return false, "this server cannot flush statistics on demand (before 15): tpm_db edges are uncertain by up to 10 s of transactions", nil
}

// Counters reads the window-edge counters in one statement. With flush it
// flushes its own pending statistics first, so they fall before the
// window, and again after the read, so that the read's commit and the
// flush's fall inside it for certain: two commits the workload subtracts.
// Each statement goes by the simple protocol, one transaction a call:
// pgx would otherwise prepare a statement on its first use, a round trip
// that the server counts as one more commit, inside the window at the
// first read and not at the next.
func (c *control) Counters(ctx context.Context, flush bool) (oltp.Counters, error) {
	version, err := c.serverVersion(ctx)
	if err != nil {
		return oltp.Counters{}, err
	}
	if flush {
		if _, err := c.conn.Exec(ctx, flushStatsSQL, simple); err != nil {
			return oltp.Counters{}, err
		}
	}
	checkpoints := "(SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)"
	if version >= 170000 {
		checkpoints = "(SELECT num_timed + num_requested FROM pg_stat_checkpointer)"
	}
	// Autovacuum's workers commit in the database too, and the server
	// counts them with calibra's: the window says how much they did.
	q := `SELECT (SELECT sum(d_next_o_id) FROM district), xact_commit + xact_rollback, ` + checkpoints + `,
		(SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables),
		(SELECT array_agg(relid::int8 ORDER BY relid) FROM pg_stat_all_tables WHERE autovacuum_count + autoanalyze_count > 0),
		(SELECT array_agg(autovacuum_count ORDER BY relid) FROM pg_stat_all_tables WHERE autovacuum_count + autoanalyze_count > 0),
		(SELECT array_agg(autoanalyze_count ORDER BY relid) FROM pg_stat_all_tables WHERE autovacuum_count + autoanalyze_count > 0),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database())
		FROM pg_stat_database WHERE datname = current_database()`
	n := oltp.Counters{CountsAutovacuum: true, AutovacuumTables: map[int64]oltp.TableAutovacuum{}}
	var rels, vacuums, analyses []int64
	err = c.conn.QueryRow(ctx, q, simple).Scan(&n.SumNextOID, &n.Xacts, &n.Checkpoints, &n.Autovacuum, &rels, &vacuums, &analyses, &n.AutovacuumBusy)
	for i := range rels {
		if i < len(vacuums) && i < len(analyses) {
			n.AutovacuumTables[rels[i]] = oltp.TableAutovacuum{Vacuums: vacuums[i], Analyses: analyses[i]}
		}
	}
	if err == nil && flush {
		_, err = c.conn.Exec(ctx, flushStatsSQL, simple)
	}
	return n, err
}

func (c *control) Checkpoint(ctx context.Context) error {
	_, err := c.conn.Exec(ctx, "CHECKPOINT")
	return err
}
