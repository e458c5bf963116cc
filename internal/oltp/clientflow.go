package oltp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// FlowStep is one step of the five client-side transactions: what it
// reads or writes, with its arguments in the order its comment gives. A
// dialect runs a step as one statement or several (FlowSQL): advancing the
// district's next order id and reading it back is one UPDATE ... RETURNING
// on PostgreSQL, an UPDATE and a SELECT on MariaDB.
type FlowStep int

const (
	StepWarehouseTax   FlowStep = iota // w → w_tax
	StepDistrictNext                   // w, d → d_tax, the order id taken (the next one advanced)
	StepOrderCustomer                  // w, d, c → c_discount, c_last, c_credit
	StepInsertOrder                    // o_id, d, w, c, ol_cnt, all_local
	StepInsertNewOrder                 // o_id, d, w
	StepItem                           // i_id → i_price, i_name, i_data
	StepStock                          // qty, remote, supply_w, i_id, d → s_data, s_dist_<d> (quantity, ytd and counts updated)
	StepInsertLine                     // o_id, d, w, number, i_id, supply_w, qty, amount, dist_info
	StepPayWarehouse                   // amount, w → w_name and address (w_ytd advanced)
	StepPayDistrict                    // amount, w, d → d_name and address (d_ytd advanced)
	StepCustomerCount                  // w, d, c_last → how many customers have it
	StepCustomerByName                 // w, d, c_last, offset → c_id
	StepPayCustomer                    // w, d, c → c_first, c_middle, c_last, c_credit, c_balance, c_since (locked)
	StepPayGoodCredit                  // amount, c, d, w
	StepPayBadCredit                   // amount, c, c_d, c_w, d, w (c_data gets the payment's line)
	StepHistory                        // c, c_d, c_w, d, w, amount, h_data
	StepStatusCustomer                 // w, d, c → c_balance, c_first, c_middle, c_last
	StepLastOrder                      // w, d, c → o_id, o_entry_d, o_carrier_id
	StepOrderLines                     // w, d, o_id → the order's lines
	StepOldestNewOrder                 // w, d → no_o_id (locked)
	StepDeleteNewOrder                 // w, d, o_id
	StepDeliverOrder                   // carrier, w, d, o_id → o_c_id (carrier set)
	StepDeliverLines                   // w, d, o_id → sum(ol_amount) (lines delivered now)
	StepCreditCustomer                 // amount, w, d, c
	StepNextOrderID                    // w, d → d_next_o_id
	StepLowStock                       // w, d, next o_id, threshold → distinct items below it
	flowSteps
)

// FlowSQL is each step's statements, run in order; the last one's row, when
// the step reads one, is the step's. Placeholders are PostgreSQL's: $n is
// the step's n-th argument (a dialect with other placeholders rewrites them).
type FlowSQL [flowSteps][]string

// NewFlowSQL is the steps' standard SQL with a dialect's own statements for
// the steps it names (where the engines' SQL differs).
func NewFlowSQL(own map[FlowStep][]string) *FlowSQL {
	q := flowStandard
	for s, stmts := range own {
		q[s] = stmts
	}
	for s, stmts := range q {
		if len(stmts) == 0 {
			panic(fmt.Sprintf("oltp: the client flow's step %d has no SQL", s))
		}
	}
	return &q
}

// flowStandard is the steps whose SQL both engines take as written.
var flowStandard = FlowSQL{
	StepWarehouseTax:  {"SELECT w_tax FROM warehouse WHERE w_id = $1"},
	StepOrderCustomer: {"SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"},
	StepInsertOrder: {`INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)`},
	StepInsertNewOrder: {"INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)"},
	StepItem:           {"SELECT i_price, i_name, i_data FROM item WHERE i_id = $1"},
	StepInsertLine: {`INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,
		ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
		VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, $9)`},
	StepCustomerCount:  {"SELECT count(*) FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3"},
	StepCustomerByName: {"SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first LIMIT 1 OFFSET $4"},
	StepPayCustomer: {`SELECT c_first, c_middle, c_last, c_credit, c_balance, c_since FROM customer
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3 FOR UPDATE`},
	StepPayGoodCredit: {`UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1,
		c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $4 AND c_d_id = $3 AND c_id = $2`},
	StepHistory: {`INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES ($1, $2, $3, $4, $5, now(), $6, $7)`},
	StepStatusCustomer: {"SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"},
	StepLastOrder: {`SELECT o_id, o_entry_d, o_carrier_id FROM orders
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = $3 ORDER BY o_id DESC LIMIT 1`},
	StepOrderLines: {`SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3`},
	StepOldestNewOrder: {"SELECT no_o_id FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 ORDER BY no_o_id LIMIT 1 FOR UPDATE"},
	StepDeleteNewOrder: {"DELETE FROM new_order WHERE no_w_id = $1 AND no_d_id = $2 AND no_o_id = $3"},
	StepCreditCustomer: {`UPDATE customer SET c_balance = c_balance + $1, c_delivery_cnt = c_delivery_cnt + 1
		WHERE c_w_id = $2 AND c_d_id = $3 AND c_id = $4`},
	StepNextOrderID: {"SELECT d_next_o_id FROM district WHERE d_w_id = $1 AND d_id = $2"},
	StepLowStock: {`SELECT count(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = $1 AND s_i_id = ol_i_id
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id >= $3 - 20 AND ol_o_id < $3 AND s_quantity < $4`},
}

// ErrNoRow is a FlowConn's answer to a row asked for that the statement did
// not return.
var ErrNoRow = errors.New("no row")

// FlowConn is one connection's statement-at-a-time access, which a dialect
// supplies to ClientFlow: statement i of a step's FlowSQL, run with the
// step's arguments (the dialect binds them to its placeholders).
type FlowConn interface {
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	Exec(ctx context.Context, s FlowStep, i int, args []any) error
	// Row scans the statement's one row into dest: ErrNoRow when it has none.
	Row(ctx context.Context, s FlowStep, i int, args []any, dest []any) error
	// Drain reads the statement's rows to the end.
	Drain(ctx context.Context, s FlowStep, i int, args []any) error
	// Again says whether a transaction that ended in err on its attempt-th
	// run (from 0; err nil on success) runs again: a Galera node's conflicts.
	Again(attempt int, err error) bool
	// Money is an exact amount in cents as the driver passes a decimal.
	Money(cents int) any
	// Sum is a place to scan an exact decimal into and to pass on as an
	// argument.
	Sum() any
}

// ClientFlow is the five transactions as a client-side driver (go-tpc,
// BenchBase) runs them: one statement at a time inside BEGIN ... COMMIT,
// one round trip each, on a dialect's FlowConn and FlowSQL.
type ClientFlow struct {
	conn FlowConn
	sql  *FlowSQL
}

// NewClientFlow runs the transactions on conn with q.
func NewClientFlow(conn FlowConn, q *FlowSQL) *ClientFlow { return &ClientFlow{conn, q} }

// inTx runs body in a transaction, committing on success and rolling back
// on any error; again while the dialect asks.
func inTx[T any](ctx context.Context, f *ClientFlow, body func(*ClientFlow, context.Context, T) error, in T) error {
	for attempt := 0; ; attempt++ {
		err := f.conn.Begin(ctx)
		if err == nil {
			if err = body(f, ctx, in); err != nil {
				_ = f.conn.Rollback(ctx)
			} else {
				err = f.conn.Commit(ctx)
			}
		}
		if !f.conn.Again(attempt, err) {
			return err
		}
	}
}

// exec runs step s's statements.
func (f *ClientFlow) exec(ctx context.Context, s FlowStep, args ...any) error {
	for i := range f.sql[s] {
		if err := f.conn.Exec(ctx, s, i, args); err != nil {
			return err
		}
	}
	return nil
}

// flowRow is a step whose row is yet to be scanned.
type flowRow struct {
	f    *ClientFlow
	ctx  context.Context
	s    FlowStep
	args []any
}

func (f *ClientFlow) row(ctx context.Context, s FlowStep, args ...any) flowRow {
	return flowRow{f, ctx, s, args}
}

// Scan runs the step's statements and scans the last one's row into dest.
func (r flowRow) Scan(dest ...any) error {
	last := len(r.f.sql[r.s]) - 1
	for i := range last {
		if err := r.f.conn.Exec(r.ctx, r.s, i, r.args); err != nil {
			return err
		}
	}
	return r.f.conn.Row(r.ctx, r.s, last, r.args, dest)
}

func (f *ClientFlow) NewOrder(ctx context.Context, in *NewOrderInput) error {
	return inTx(ctx, f, (*ClientFlow).newOrder, in)
}

func (f *ClientFlow) newOrder(ctx context.Context, in *NewOrderInput) error {
	var wTax, dTax, discount float64
	var oID int
	var cLast, credit string
	if err := f.row(ctx, StepWarehouseTax, in.W).Scan(&wTax); err != nil {
		return err
	}
	if err := f.row(ctx, StepDistrictNext, in.W, in.D).Scan(&dTax, &oID); err != nil {
		return err
	}
	if err := f.row(ctx, StepOrderCustomer, in.W, in.D, in.C).Scan(&discount, &cLast, &credit); err != nil {
		return err
	}
	allLocal := 0
	if in.AllLocal {
		allLocal = 1
	}
	if err := f.exec(ctx, StepInsertOrder, oID, in.D, in.W, in.C, len(in.ItemIDs), allLocal); err != nil {
		return err
	}
	if err := f.exec(ctx, StepInsertNewOrder, oID, in.D, in.W); err != nil {
		return err
	}
	var total float64
	for i, item := range in.ItemIDs {
		var price float64
		var name, iData, sData, dist string
		err := f.row(ctx, StepItem, item).Scan(&price, &name, &iData)
		if errors.Is(err, ErrNoRow) {
			return ErrRolledBack
		}
		if err != nil {
			return err
		}
		remote := 0
		if int(in.SupplyW[i]) != in.W {
			remote = 1
		}
		if err := f.row(ctx, StepStock, in.Qty[i], remote, in.SupplyW[i], item, in.D).Scan(&sData, &dist); err != nil {
			return err
		}
		amount := float64(in.Qty[i]) * price
		if err := f.exec(ctx, StepInsertLine, oID, in.D, in.W, i+1, item, in.SupplyW[i], in.Qty[i], amount, dist); err != nil {
			return err
		}
		total += amount
	}
	_ = total * (1 - discount) * (1 + wTax + dTax)
	in.OID = oID
	return nil
}

// customerByName finds the customer at position ceil(n/2), by first name,
// of those with the last name (clause 2.5.2.2).
func (f *ClientFlow) customerByName(ctx context.Context, w, d int, last string) (int, error) {
	var n int
	if err := f.row(ctx, StepCustomerCount, w, d, last).Scan(&n); err != nil {
		return 0, err
	}
	var id int
	err := f.row(ctx, StepCustomerByName, w, d, last, max((n+1)/2-1, 0)).Scan(&id)
	return id, err
}

func (f *ClientFlow) Payment(ctx context.Context, in *PaymentInput) error {
	return inTx(ctx, f, (*ClientFlow).payment, in)
}

// address is a warehouse's or district's name and address, as Payment
// reads them for the terminal (clause 2.5.3.3).
type address struct{ name, street1, street2, city, state, zip string }

func (a *address) dest() []any {
	return []any{&a.name, &a.street1, &a.street2, &a.city, &a.state, &a.zip}
}

func (f *ClientFlow) payment(ctx context.Context, in *PaymentInput) error {
	amount := f.conn.Money(in.AmountCents)
	var wh, dist address
	if err := f.row(ctx, StepPayWarehouse, amount, in.W).Scan(wh.dest()...); err != nil {
		return err
	}
	if err := f.row(ctx, StepPayDistrict, amount, in.W, in.D).Scan(dist.dest()...); err != nil {
		return err
	}
	c := in.C
	if c == 0 {
		var err error
		if c, err = f.customerByName(ctx, in.CW, in.CD, in.CLast); err != nil {
			return err
		}
	}
	var first, middle, last, credit string
	var balance float64
	var since time.Time
	if err := f.row(ctx, StepPayCustomer, in.CW, in.CD, c).Scan(&first, &middle, &last, &credit, &balance, &since); err != nil {
		return err
	}
	var err error
	if credit == "BC" {
		err = f.exec(ctx, StepPayBadCredit, amount, c, in.CD, in.CW, in.D, in.W)
	} else {
		err = f.exec(ctx, StepPayGoodCredit, amount, c, in.CD, in.CW)
	}
	if err != nil {
		return err
	}
	in.PaidC = c
	return f.exec(ctx, StepHistory, c, in.CD, in.CW, in.D, in.W, amount, wh.name+"    "+dist.name)
}

func (f *ClientFlow) OrderStatus(ctx context.Context, in *OrderStatusInput) error {
	return inTx(ctx, f, (*ClientFlow).orderStatus, in)
}

func (f *ClientFlow) orderStatus(ctx context.Context, in *OrderStatusInput) error {
	c := in.C
	if c == 0 {
		var err error
		if c, err = f.customerByName(ctx, in.W, in.D, in.CLast); err != nil {
			return err
		}
	}
	var balance float64
	var first, middle, last string
	if err := f.row(ctx, StepStatusCustomer, in.W, in.D, c).Scan(&balance, &first, &middle, &last); err != nil {
		return err
	}
	var oID int
	var entry time.Time
	var carrier *int
	if err := f.row(ctx, StepLastOrder, in.W, in.D, c).Scan(&oID, &entry, &carrier); err != nil {
		return err
	}
	return f.conn.Drain(ctx, StepOrderLines, 0, []any{in.W, in.D, oID})
}

func (f *ClientFlow) Delivery(ctx context.Context, in *DeliveryInput) error {
	return inTx(ctx, f, (*ClientFlow).delivery, in)
}

func (f *ClientFlow) delivery(ctx context.Context, in *DeliveryInput) error {
	in.Skipped = 0
	for d := 1; d <= tpcc.DistrictsPerWarehouse; d++ {
		var oID, cID int
		err := f.row(ctx, StepOldestNewOrder, in.W, d).Scan(&oID)
		if errors.Is(err, ErrNoRow) {
			in.Skipped++
			continue // no undelivered order in this district (clause 2.7.4.2)
		}
		if err != nil {
			return err
		}
		if err := f.exec(ctx, StepDeleteNewOrder, in.W, d, oID); err != nil {
			return err
		}
		if err := f.row(ctx, StepDeliverOrder, in.Carrier, in.W, d, oID).Scan(&cID); err != nil {
			return err
		}
		amount := f.conn.Sum() // exact, as the server sums it
		if err := f.row(ctx, StepDeliverLines, in.W, d, oID).Scan(amount); err != nil {
			return err
		}
		if err := f.exec(ctx, StepCreditCustomer, amount, in.W, d, cID); err != nil {
			return err
		}
	}
	return nil
}

func (f *ClientFlow) StockLevel(ctx context.Context, in *StockLevelInput) error {
	return inTx(ctx, f, (*ClientFlow).stockLevel, in)
}

func (f *ClientFlow) stockLevel(ctx context.Context, in *StockLevelInput) error {
	var next, low int
	if err := f.row(ctx, StepNextOrderID, in.W, in.D).Scan(&next); err != nil {
		return err
	}
	return f.row(ctx, StepLowStock, in.W, in.D, next, in.Threshold).Scan(&low)
}
