package oltp

import (
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Connect opens a control session on e's schema.
func Connect(ctx context.Context, e engine.Engine) (Control, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	return d.Connect(ctx)
}

// NewSession opens one session on e's schema running the transactions as
// mode says; the power-loss audit runs New-Order and Payment on it in
// AuditMode.
func NewSession(ctx context.Context, e engine.Engine, mode Mode) (Session, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	return d.Session(ctx, mode)
}

// AuditMode is the mode the power-loss audit runs in: every dialect has
// it, and in it every dialect sets the order's id (in.OID) and the
// customer paid (in.PaidC), which the audit journals once COMMIT returned.
const AuditMode = ModeClientSimple

// The power-loss audit's reads, in the SQL both dialects speak; their
// integers are calibra's own, so no placeholder (whose spelling differs)
// is needed.

// NextOrderIDs is each district's next order id.
func NextOrderIDs(ctx context.Context, ctl Control) (map[District]int, error) {
	rows, err := ctl.Ints(ctx, "SELECT d_w_id, d_id, d_next_o_id FROM district")
	out := make(map[District]int, len(rows))
	for _, r := range rows {
		out[District{W: int(r[0]), D: int(r[1])}] = int(r[2])
	}
	return out, err
}

// OrderIDs lists the district's orders from id from on.
func OrderIDs(ctx context.Context, ctl Control, k District, from int) ([]int, error) {
	rows, err := ctl.Ints(ctx, fmt.Sprintf("SELECT o_id FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id >= %d", k.W, k.D, from))
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = int(r[0])
	}
	return out, err
}

// Payments counts each customer's payments in the history.
func Payments(ctx context.Context, ctl Control) (map[Customer]int64, error) {
	rows, err := ctl.Ints(ctx, "SELECT h_c_w_id, h_c_d_id, h_c_id, count(*) FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id")
	out := make(map[Customer]int64, len(rows))
	for _, r := range rows {
		out[Customer{W: int(r[0]), D: int(r[1]), C: int(r[2])}] = r[3]
	}
	return out, err
}

// Dest is the scan destinations of row's integers (Control.Ints).
func Dest(row []int64) []any {
	dest := make([]any, len(row))
	for i := range row {
		dest[i] = &row[i]
	}
	return dest
}

// PageChecker is a Control that verifies the workload's data pages, as
// the power-loss audit does after each recovery.
type PageChecker interface {
	CheckPages(ctx context.Context) (PageCheck, error)
}

// PageCheck is what a page check found.
type PageCheck struct {
	Method string // what checked, in words
	// Damaged names each damaged page found (relation and block), or a
	// relation the check could not read past a damaged page.
	Damaged []string
}

// fingerprint sums what the transactions change, in integer columns only
// (money's decimals scan differently in each dialect): two servers of one
// database that agree on it hold the same orders, lines, payments and
// stock counts.
const fingerprint = `SELECT
	(SELECT count(*) FROM orders), (SELECT sum(o_ol_cnt) FROM orders), (SELECT count(*) FROM new_order),
	(SELECT count(*) FROM order_line), (SELECT sum(ol_quantity) FROM order_line), (SELECT count(*) FROM history),
	(SELECT sum(c_payment_cnt) FROM customer), (SELECT sum(c_delivery_cnt) FROM customer),
	(SELECT sum(s_quantity) FROM stock), (SELECT sum(s_order_cnt) FROM stock), (SELECT sum(d_next_o_id) FROM district)`

// FingerprintNames name fingerprint's columns, for a report of where two
// servers differ.
var FingerprintNames = []string{"orders", "sum(o_ol_cnt)", "new_order rows", "order_line rows", "sum(ol_quantity)",
	"history rows", "sum(c_payment_cnt)", "sum(c_delivery_cnt)", "sum(s_quantity)", "sum(s_order_cnt)", "sum(d_next_o_id)"}

// Fingerprint is the database's fingerprint (FingerprintNames): the
// power-loss audit compares a cluster's nodes with it.
func Fingerprint(ctx context.Context, ctl Control) ([]int64, error) {
	rows, err := ctl.Ints(ctx, fingerprint)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 || len(rows[0]) != len(FingerprintNames) {
		return nil, fmt.Errorf("the fingerprint returned %d rows", len(rows))
	}
	return rows[0], nil
}
