package oltppg

import (
	"context"
	"errors"
	"math/big"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// simpleExec is ModeClientSimple: oltp's client flow, one prepared
// statement per round trip; pgx prepares each text once per connection
// and reuses it.
type simpleExec struct {
	session
	*oltp.ClientFlow
}

func newSimpleExec(conn *pgx.Conn) *simpleExec {
	return &simpleExec{session{conn}, oltp.NewClientFlow(&flowConn{conn: conn}, flowSQL)}
}

// flowSQL is PostgreSQL's own steps: an UPDATE ... RETURNING reads back
// what it wrote in the same round trip.
var flowSQL = oltp.NewFlowSQL(map[oltp.FlowStep][]string{
	oltp.StepDistrictNext: {`UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2
		RETURNING d_tax, d_next_o_id - 1`},
	oltp.StepStock: {`UPDATE stock SET
		s_quantity = CASE WHEN s_quantity >= $1 + 10 THEN s_quantity - $1 ELSE s_quantity - $1 + 91 END,
		s_ytd = s_ytd + $1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $2
		WHERE s_w_id = $3 AND s_i_id = $4
		RETURNING s_data, (ARRAY[s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
			s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10])[$5]`},
	oltp.StepPayWarehouse: {`UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2
		RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip`},
	oltp.StepPayDistrict: {`UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3
		RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip`},
	oltp.StepPayBadCredit: {`UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1,
		c_payment_cnt = c_payment_cnt + 1,
		c_data = left($2::int || ' ' || $3::int || ' ' || $4::int || ' ' || $5::int || ' ' || $6::int || ' ' || $1 || ' | ' || c_data, 500)
		WHERE c_w_id = $4 AND c_d_id = $3 AND c_id = $2`},
	oltp.StepDeliverOrder: {`UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4
		RETURNING o_c_id`},
	oltp.StepDeliverLines: {`WITH l AS (UPDATE order_line SET ol_delivery_d = now()
		WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3 RETURNING ol_amount)
		SELECT sum(ol_amount) FROM l`},
})

// flowConn is the client flow's statements on pgx, each text prepared on
// first use and cached by the connection.
type flowConn struct {
	conn *pgx.Conn
	tx   pgx.Tx
}

func (c *flowConn) Begin(ctx context.Context) (err error) {
	c.tx, err = c.conn.Begin(ctx)
	return err
}

func (c *flowConn) Commit(ctx context.Context) error   { return c.tx.Commit(ctx) }
func (c *flowConn) Rollback(ctx context.Context) error { return c.tx.Rollback(ctx) }

func (c *flowConn) Exec(ctx context.Context, s oltp.FlowStep, i int, args []any) error {
	_, err := c.conn.Exec(ctx, flowSQL[s][i], args...)
	return err
}

func (c *flowConn) Row(ctx context.Context, s oltp.FlowStep, i int, args []any, dest []any) error {
	err := c.conn.QueryRow(ctx, flowSQL[s][i], args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return oltp.ErrNoRow
	}
	return err
}

func (c *flowConn) Drain(ctx context.Context, s oltp.FlowStep, i int, args []any) error {
	rows, err := c.conn.Query(ctx, flowSQL[s][i], args...)
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

// Again is never: a PostgreSQL transaction that failed is the run's error.
func (*flowConn) Again(int, error) bool { return false }

func (*flowConn) Money(cents int) any {
	return pgtype.Numeric{Int: bigInt(cents), Exp: -2, Valid: true}
}

func (*flowConn) Sum() any { return new(pgtype.Numeric) }

func bigInt(v int) *big.Int { return big.NewInt(int64(v)) }
