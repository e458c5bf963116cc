package oltppg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// CheckPages runs amcheck on every table (verify_heapam) and B-tree index
// (bt_index_check) of the workload; with data checksums on, reading a
// torn page fails its checksum, which is a finding too.
func (c *control) CheckPages(ctx context.Context) (oltp.PageCheck, error) {
	var sums string
	if err := c.conn.QueryRow(ctx, "SHOW data_checksums").Scan(&sums); err != nil {
		return oltp.PageCheck{}, err
	}
	check := oltp.PageCheck{Method: "amcheck (verify_heapam, bt_index_check), data checksums " + sums}
	if _, err := c.conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS amcheck"); err != nil {
		return check, fmt.Errorf("amcheck, which the page check needs (PostgreSQL's contrib): %w", err)
	}
	rows, err := c.conn.Query(ctx, `SELECT c.oid::regclass::text, c.relkind = 'i' FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_am a ON a.oid = c.relam
		WHERE n.nspname = $1 AND (c.relkind = 'r' OR c.relkind = 'i' AND a.amname = 'btree') ORDER BY 1`, oltp.Schema)
	if err != nil {
		return check, err
	}
	type rel struct {
		name  string
		index bool
	}
	rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rel, error) {
		var x rel
		return x, r.Scan(&x.name, &x.index)
	})
	if err != nil {
		return check, err
	}
	for _, r := range rels {
		if r.index {
			if _, err := c.conn.Exec(ctx, "SELECT bt_index_check($1::regclass)", r.name); err != nil {
				check.Damaged = append(check.Damaged, fmt.Sprintf("index %s: %v", r.name, err))
			}
			continue
		}
		found, err := heapFindings(ctx, c.conn, r.name)
		if err != nil {
			found = append(found, fmt.Sprintf("table %s: %v", r.name, err))
		}
		check.Damaged = append(check.Damaged, found...)
	}
	return check, ctx.Err()
}

// heapFindings is verify_heapam's findings on table, one a damaged block.
func heapFindings(ctx context.Context, conn *pgx.Conn, table string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT blkno, min(msg) FROM verify_heapam($1::regclass) GROUP BY blkno ORDER BY blkno", table)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var blk int64
		var msg string
		err := r.Scan(&blk, &msg)
		return fmt.Sprintf("table %s block %d: %s", table, blk, msg), err
	})
}
