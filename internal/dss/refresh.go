package dss

import (
	"context"
	"fmt"
	"math"
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

// OrderColumns and LineColumns are the columns a refresh function copies,
// all but the order key.
const (
	OrderColumns = "o_custkey, o_orderstatus, o_totalprice, o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment"
	LineColumns  = `l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag,
	l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_shipinstruct, l_shipmode, l_comment`
)

// rf1 inserts the new orders and their lines in one transaction and
// returns the rows inserted.
func rf1(ctx context.Context, conn Conn, bi *BuildInfo) (int64, error) {
	return conn.RF1(ctx, bi.KeyShift, refreshOrders(bi.ScaleFactor))
}

// rf2 deletes the oldest orders that RF1 copied, and their lines, in one
// transaction, and returns the lines deleted.
func rf2(ctx context.Context, conn Conn, bi *BuildInfo) (int64, error) {
	return conn.DeleteCopied(ctx, bi.KeyShift, refreshOrders(bi.ScaleFactor))
}

// completePair finishes a refresh pair cut between its RF1 and its RF2:
// it deletes every order that has a copy, and their lines, and returns
// the orders deleted (0 when the last pair was whole).
func completePair(ctx context.Context, conn Conn, bi *BuildInfo) (int64, error) {
	pending, err := count(ctx, conn, fmt.Sprintf(`SELECT count(*) FROM orders o
		WHERE EXISTS (SELECT 1 FROM orders n WHERE n.o_orderkey = o.o_orderkey + %d)`, bi.KeyShift))
	if err != nil || pending == 0 {
		return 0, err
	}
	_, err = conn.DeleteCopied(ctx, bi.KeyShift, 0)
	return pending, err
}
