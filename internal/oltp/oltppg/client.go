package oltppg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// clientExec runs the five transactions from the client in few round
// trips (ModeClient): statements sent together in one pipeline (a pgx
// batch) and set-oriented where the data allows, as CockroachDB's TPC-C
// workload does, on statements prepared as the connection opened
// (prepareClient) and run by name. A New-Order takes two round trips, the
// others one; the isolation, the unused item's rollback, the by-name
// selection and the Stock-Level join are simpleExec's. On the polling
// driver the same round trips go through rawclient.go.
type clientExec struct {
	rawSocket
	// Reused between transactions, so the hot path grows no slices.
	items  []int32   // the distinct items asked for, then those found
	prices []float64 // by items
	lines  lineArrays
	stock  lineArrays // the order's stock rows, each once (number and amount unused)
	polled polledTxn  // the transaction in flight on the polling driver
}

// lineArrays are order lines as the columns unnest takes.
type lineArrays struct {
	number, item, supplyW, qty []int32
	amount                     []float64
}

func (l *lineArrays) reset() {
	l.number, l.item, l.supplyW, l.qty, l.amount = l.number[:0], l.item[:0], l.supplyW[:0], l.qty[:0], l.amount[:0]
}

func (l *lineArrays) add(number, item, supplyW, qty int32, amount float64) {
	l.number = append(l.number, number)
	l.item = append(l.item, item)
	l.supplyW = append(l.supplyW, supplyW)
	l.qty = append(l.qty, qty)
	l.amount = append(l.amount, amount)
}

// The New-Order's statements. Its second round trip holds its order, its
// stock rows updated together, its lines taking their district info from
// the stock rows updated, then COMMIT. Stock rows are updated in the
// lines' (supply warehouse, item) order, so concurrent New-Orders take
// their locks in one order, as simpleExec's do.
const (
	newOrderWarehouse = "SELECT w_tax FROM warehouse WHERE w_id = $1"
	newOrderDistrict  = `UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_tax, d_next_o_id - 1`
	newOrderCustomer = "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3"
	newOrderItems    = "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id = ANY($1)"
	newOrderOrder    = `INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES ($1, $2, $3, $4, now(), NULL, $5, $6)`
	newOrderNewOrder = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ($1, $2, $3)"
	stockSet         = `s_quantity = CASE WHEN s.s_quantity >= u.q + 10 THEN s.s_quantity - u.q ELSE s.s_quantity - u.q + 91 END,
		s_ytd = s.s_ytd + u.q, s_order_cnt = s.s_order_cnt + 1, s_remote_cnt = s.s_remote_cnt + (u.w <> $1)::int`
	// $1 home warehouse, $2 district, $3 order id; the lines' numbers,
	// items, supply warehouses, quantities and amounts ($4 to $8); the
	// stock rows' items, supply warehouses and quantities ($9 to $11).
	newOrderLines = `WITH s AS (UPDATE stock s SET ` + stockSet + `
			FROM unnest($9::int[], $10::int[], $11::int[]) AS u(i, w, q) WHERE s.s_w_id = u.w AND s.s_i_id = u.i
			RETURNING s.s_i_id, s.s_w_id, CASE $2::int
				WHEN 1 THEN s.s_dist_01 WHEN 2 THEN s.s_dist_02 WHEN 3 THEN s.s_dist_03 WHEN 4 THEN s.s_dist_04
				WHEN 5 THEN s.s_dist_05 WHEN 6 THEN s.s_dist_06 WHEN 7 THEN s.s_dist_07 WHEN 8 THEN s.s_dist_08
				WHEN 9 THEN s.s_dist_09 ELSE s.s_dist_10 END AS dist)
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
			ol_quantity, ol_amount, ol_dist_info)
		SELECT $3, $2, $1, l.n, l.i, l.w, NULL, l.q, l.a, s.dist
		FROM unnest($4::int[], $5::int[], $6::int[], $7::int[], $8::float8[]) AS l(n, i, w, q, a)
		JOIN s ON s.s_i_id = l.i AND s.s_w_id = l.w`
	// A line naming a stock row an earlier line of the order named updates
	// it again, as simpleExec's line-by-line updates do: one row an update
	// statement changes only once.
	newOrderRepeat = `UPDATE stock s SET ` + stockSet + `
		FROM (SELECT $2::int AS i, $3::int AS w, $4::int AS q) u WHERE s.s_w_id = u.w AND s.s_i_id = u.i`
)

func (e *clientExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	wanted := e.distinctItems(in)

	var b pgx.Batch
	b.Queue(csBegin.name())
	b.Queue(csWarehouse.name(), in.W)
	b.Queue(csDistrict.name(), in.W, in.D)
	b.Queue(csCustomer.name(), in.W, in.D, in.C)
	b.Queue(csItems.name(), e.items)
	var wTax, dTax, discount float64
	var oID int
	var cLast, credit string
	err := e.send(ctx, &b, func(r pgx.BatchResults) error {
		if _, err := r.Exec(); err != nil {
			return err
		}
		if err := r.QueryRow().Scan(&wTax); err != nil {
			return err
		}
		if err := r.QueryRow().Scan(&dTax, &oID); err != nil {
			return err
		}
		if err := r.QueryRow().Scan(&discount, &cLast, &credit); err != nil {
			return err
		}
		rows, err := r.Query()
		if err != nil {
			return err
		}
		e.items, e.prices = e.items[:0], e.prices[:0]
		for rows.Next() {
			var id int32
			var price float64
			var name, data string
			if err := rows.Scan(&id, &price, &name, &data); err != nil {
				rows.Close()
				return err
			}
			e.items, e.prices = append(e.items, id), append(e.prices, price)
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return err
	}
	if len(e.items) < wanted {
		// The unused item (clause 2.4.2.3): nothing is committed.
		if _, err := e.conn.Exec(ctx, "ROLLBACK"); err != nil {
			return err
		}
		return oltp.ErrRolledBack
	}

	b = pgx.Batch{}
	total := e.orderLines(in)
	_ = total * (1 - discount) * (1 + wTax + dTax)
	b.Queue(csOrder.name(), oID, in.D, in.W, in.C, len(in.ItemIDs), allLocal(in))
	b.Queue(csNewOrder.name(), oID, in.D, in.W)
	b.Queue(csLines.name(), in.W, in.D, oID, e.lines.number, e.lines.item, e.lines.supplyW, e.lines.qty, e.lines.amount,
		e.stock.item, e.stock.supplyW, e.stock.qty)
	for i := 1; i < len(in.ItemIDs); i++ {
		if repeatsStock(in, i) {
			b.Queue(csRepeat.name(), in.W, in.ItemIDs[i], in.SupplyW[i], in.Qty[i])
		}
	}
	b.Queue(csCommit.name())
	if err := e.send(ctx, &b, execAll(b.Len())); err != nil {
		return err
	}
	in.OID = oID
	return nil
}

// distinctItems puts the order's items, each once, in e.items (the
// items query's parameter) and returns how many they are.
func (e *clientExec) distinctItems(in *oltp.NewOrderInput) int {
	e.items = e.items[:0]
	for _, item := range in.ItemIDs {
		if !containsInt32(e.items, item) {
			e.items = append(e.items, item)
		}
	}
	return len(e.items)
}

// orderLines fills e.lines with the order's lines, their amounts from the
// prices found (e.items, e.prices), and e.stock with its stock rows, each
// once; it returns the order's total.
func (e *clientExec) orderLines(in *oltp.NewOrderInput) float64 {
	e.lines.reset()
	e.stock.reset()
	var total float64
	for i, item := range in.ItemIDs {
		amount := float64(in.Qty[i]) * e.prices[indexInt32(e.items, item)]
		total += amount
		e.lines.add(int32(i+1), item, in.SupplyW[i], in.Qty[i], amount)
		if !repeatsStock(in, i) {
			e.stock.add(0, item, in.SupplyW[i], in.Qty[i], 0)
		}
	}
	return total
}

// repeatsStock says whether line i names the stock row of the line
// before it: the lines are sorted, so a repeated row follows its first
// line.
func repeatsStock(in *oltp.NewOrderInput, i int) bool {
	return i > 0 && in.ItemIDs[i] == in.ItemIDs[i-1] && in.SupplyW[i] == in.SupplyW[i-1]
}

// allLocal is the order's o_all_local.
func allLocal(in *oltp.NewOrderInput) int {
	if in.AllLocal {
		return 1
	}
	return 0
}

func containsInt32(s []int32, v int32) bool { return indexInt32(s, v) >= 0 }

func indexInt32(s []int32, v int32) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// send runs a batch as one pipeline (one round trip) and reads its results
// with read; on any error inside an explicit transaction it rolls back.
func (e *clientExec) send(ctx context.Context, b *pgx.Batch, read func(pgx.BatchResults) error) error {
	r := e.conn.SendBatch(ctx, b)
	err := read(r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil && !e.conn.IsClosed() && e.conn.PgConn().TxStatus() != 'I' {
		_, _ = e.conn.Exec(ctx, "ROLLBACK")
	}
	return err
}

// execAll reads n results that return no rows worth keeping.
func execAll(n int) func(pgx.BatchResults) error {
	return func(r pgx.BatchResults) error {
		for i := 0; i < n; i++ {
			if _, err := r.Exec(); err != nil {
				return err
			}
		}
		return nil
	}
}

// byName selects the customer at position ceil(n/2), by first name, of
// the n with the last name (clause 2.5.2.2), in one statement: the offset
// (n-1)/2 is simpleExec's (n+1)/2-1.
const byName = `(SELECT c_id FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3 ORDER BY c_first
	OFFSET (SELECT (count(*) - 1) / 2 FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_last = $3) LIMIT 1)`

// The Payment in one statement: the warehouse, the district and the
// customer updated and the history row inserted together; the customer's
// credit chooses in the statement whether c_data grows (clause 2.5.2.2).
// $1 customer's warehouse, $2 its district, $3 the customer (id or last
// name), $4 warehouse, $5 district, $6 amount.
const paymentSQL = `WITH w AS (UPDATE warehouse SET w_ytd = w_ytd + $6 WHERE w_id = $4 RETURNING w_name),
	d AS (UPDATE district SET d_ytd = d_ytd + $6 WHERE d_w_id = $4 AND d_id = $5 RETURNING d_name),
	c AS (UPDATE customer SET c_balance = c_balance - $6, c_ytd_payment = c_ytd_payment + $6,
			c_payment_cnt = c_payment_cnt + 1,
			c_data = CASE WHEN c_credit = 'BC'
				THEN left(c_id || ' ' || $2::int || ' ' || $1::int || ' ' || $5::int || ' ' || $4::int || ' ' || $6 || ' | ' || c_data, 500)
				ELSE c_data END
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = %s
		RETURNING c_id, c_first, c_middle, c_last, c_credit, c_balance, c_since)
	INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
	SELECT c.c_id, $2, $1, $5, $4, now(), $6, w.w_name || '    ' || d.d_name FROM w, d, c
	RETURNING h_c_id`

var (
	paymentByID   = fmt.Sprintf(paymentSQL, "$3::int")
	paymentByName = fmt.Sprintf(paymentSQL, byName)
)

func (e *clientExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	amount := pgtype.Numeric{Int: bigInt(in.AmountCents), Exp: -2, Valid: true}
	s, who := csPaymentByID, any(in.C)
	if in.C == 0 {
		s, who = csPaymentByName, in.CLast
	}
	return e.conn.QueryRow(ctx, s.name(), in.CW, in.CD, who, in.W, in.D, amount).Scan(&in.PaidC)
}

// The Order-Status in one statement: the customer, its last order and
// that order's lines. $1 warehouse, $2 district, $3 the customer.
const orderStatusSQL = `WITH c AS (SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer
		WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = %s),
	o AS (SELECT o_id, o_entry_d, o_carrier_id FROM orders
		WHERE o_w_id = $1 AND o_d_id = $2 AND o_c_id = (SELECT c_id FROM c) ORDER BY o_id DESC LIMIT 1)
	SELECT c.c_balance, c.c_first, c.c_middle, c.c_last, o.o_id, o.o_entry_d, o.o_carrier_id,
		ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
	FROM c CROSS JOIN o LEFT JOIN order_line ON ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = o.o_id`

var (
	orderStatusByID   = fmt.Sprintf(orderStatusSQL, "$3::int")
	orderStatusByName = fmt.Sprintf(orderStatusSQL, byName)
)

func (e *clientExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	s, who := csStatusByID, any(in.C)
	if in.C == 0 {
		s, who = csStatusByName, in.CLast
	}
	rows, err := e.conn.Query(ctx, s.name(), in.W, in.D, who)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return pgx.ErrNoRows // no customer or no order: simpleExec fails the same way
	}
	return nil
}

// The Delivery in one statement: each district's oldest new order taken
// and deleted, its order given the carrier, its lines the delivery date
// and its customer the lines' sum. Each district's oldest is locked as
// simpleExec's SELECT ... ORDER BY ... LIMIT 1 FOR UPDATE locks it, so one
// that a concurrent Delivery took gives way to the next. $1 warehouse, $2
// carrier.
var deliverySQL = fmt.Sprintf(`WITH n AS (DELETE FROM new_order x
		USING generate_series(1, %d) AS g(d) CROSS JOIN LATERAL (SELECT no_o_id AS o FROM new_order
			WHERE no_w_id = $1 AND no_d_id = g.d ORDER BY no_o_id LIMIT 1 FOR UPDATE) m
		WHERE x.no_w_id = $1 AND x.no_d_id = g.d AND x.no_o_id = m.o
		RETURNING x.no_d_id AS d, x.no_o_id AS o),
	o AS (UPDATE orders SET o_carrier_id = $2 FROM n WHERE o_w_id = $1 AND o_d_id = n.d AND o_id = n.o
		RETURNING o_d_id AS d, o_c_id AS c),
	l AS (UPDATE order_line SET ol_delivery_d = now() FROM n WHERE ol_w_id = $1 AND ol_d_id = n.d AND ol_o_id = n.o
		RETURNING ol_d_id AS d, ol_amount),
	t AS (SELECT d, sum(ol_amount) AS amount FROM l GROUP BY d),
	c AS (UPDATE customer SET c_balance = c_balance + t.amount, c_delivery_cnt = c_delivery_cnt + 1
		FROM o JOIN t USING (d) WHERE c_w_id = $1 AND c_d_id = o.d AND c_id = o.c RETURNING 1)
	SELECT (SELECT count(*) FROM n), (SELECT count(*) FROM c)`, tpcc.DistrictsPerWarehouse)

func (e *clientExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	var done, customers int
	if err := e.conn.QueryRow(ctx, csDelivery.name(), in.W, in.Carrier).Scan(&done, &customers); err != nil {
		return err
	}
	in.Skipped = tpcc.DistrictsPerWarehouse - done
	return nil
}

// The Stock-Level in one statement: the district's next order id joined
// in rather than read first.
const stockLevelSQL = `SELECT count(DISTINCT s_i_id) FROM district
	JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id
	JOIN stock ON s_w_id = d_w_id AND s_i_id = ol_i_id
	WHERE d_w_id = $1 AND d_id = $2 AND s_quantity < $3`

func (e *clientExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	var low int
	return e.conn.QueryRow(ctx, csStockLevel.name(), in.W, in.D, in.Threshold).Scan(&low)
}
