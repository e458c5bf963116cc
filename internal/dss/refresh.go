package dss

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
)

// The refresh functions keep the database re-runnable for ever, with the
// specification's volumes: RF1 inserts SF x 1500 orders with their lines,
// RF2 deletes SF x 1500 orders with theirs (clause 2.5). dbgen's update sets
// are finite and tpchgen-cli does not make them, so the new orders are
// copies of the oldest ones under free keys (the key plus the build's key
// shift, in dbgen's sparse key pattern), and RF2 deletes the oldest orders
// that have such a copy. Each pair moves the oldest orders to new keys and
// leaves every count and distribution as loaded. Between pairs no order has
// its copy, so the database itself is the journal: an RF1 whose RF2 never
// ran (an interrupt) shows as orders with copies, and completePair deletes
// them before the next test.

// refreshOrders is the number of orders a refresh function inserts or
// deletes: SF x 1500, at least one.
func refreshOrders(sf float64) int64 {
	return max(1, int64(math.Round(sf*1500)))
}

const orderColumns = "o_custkey, o_orderstatus, o_totalprice, o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment"
const lineColumns = `l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag,
	l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment`

// rf1 inserts the new orders and their lines in one transaction (one
// statement) and returns the rows inserted.
func rf1(ctx context.Context, conn *pgx.Conn, bi *BuildInfo) (int64, error) {
	sql := fmt.Sprintf(`WITH src AS (
		SELECT o_orderkey FROM orders o
		WHERE NOT EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[1]d)
		ORDER BY o_orderkey LIMIT %[2]d),
	new_orders AS (
		INSERT INTO orders (o_orderkey, %[3]s)
		SELECT o.o_orderkey + %[1]d, %[3]s FROM orders o JOIN src USING (o_orderkey) RETURNING 1)
	INSERT INTO lineitem (l_orderkey, %[4]s)
	SELECT l_orderkey + %[1]d, %[4]s FROM lineitem JOIN src ON l_orderkey = src.o_orderkey`,
		bi.KeyShift, refreshOrders(bi.ScaleFactor), orderColumns, lineColumns)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}

// rf2 deletes the oldest orders that RF1 copied, and their lines, in one
// transaction, and returns the lines deleted.
func rf2(ctx context.Context, conn *pgx.Conn, bi *BuildInfo) (int64, error) {
	return deleteCopied(ctx, conn, bi, fmt.Sprintf("LIMIT %d", refreshOrders(bi.ScaleFactor)))
}

// completePair finishes a refresh pair cut between its RF1 and its RF2:
// it deletes every order that has a copy, and their lines, and returns
// the orders deleted (0 when the last pair was whole).
func completePair(ctx context.Context, conn *pgx.Conn, bi *BuildInfo) (int64, error) {
	var pending int64
	err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM orders o
		WHERE EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %d)`, bi.KeyShift)).Scan(&pending)
	if err != nil || pending == 0 {
		return 0, err
	}
	_, err = deleteCopied(ctx, conn, bi, "")
	return pending, err
}

// deleteCopied deletes the oldest orders that have a copy (all of them
// without a limit) and their lines, in one statement, and returns the
// lines deleted.
func deleteCopied(ctx context.Context, conn *pgx.Conn, bi *BuildInfo, limit string) (int64, error) {
	sql := fmt.Sprintf(`WITH victim AS (
		SELECT o_orderkey FROM orders o
		WHERE EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %[1]d)
		ORDER BY o_orderkey %[2]s),
	gone AS (DELETE FROM orders WHERE o_orderkey IN (SELECT o_orderkey FROM victim) RETURNING 1)
	DELETE FROM lineitem WHERE l_orderkey IN (SELECT o_orderkey FROM victim)`,
		bi.KeyShift, limit)
	tag, err := conn.Exec(ctx, sql)
	return tag.RowsAffected(), err
}
