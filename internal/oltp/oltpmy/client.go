package oltpmy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// clientExec is ModeClientSimple on MariaDB: oltp's
// client flow on server-side prepared statements, one round trip each.
type clientExec struct {
	*session
	*oltp.ClientFlow
}

// flowSQL is MariaDB's own steps. MariaDB has no UPDATE ... RETURNING,
// so a row updated and then read is read back by a second statement.
var flowSQL = oltp.NewFlowSQL(map[oltp.FlowStep][]string{
	oltp.StepDistrictNext: {
		"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2",
		"SELECT d_tax, d_next_o_id - 1 FROM district WHERE d_w_id = $1 AND d_id = $2"},
	// ELT picks the district's s_dist column, so one statement serves all ten.
	oltp.StepStock: {
		`UPDATE stock SET s_quantity = IF(s_quantity >= $1 + 10, s_quantity - $1, s_quantity - $1 + 91),
			s_ytd = s_ytd + $1, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + $2
			WHERE s_w_id = $3 AND s_i_id = $4`,
		`SELECT s_data, ELT($5, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05,
			s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10) FROM stock WHERE s_w_id = $3 AND s_i_id = $4`},
	oltp.StepPayWarehouse: {
		"UPDATE warehouse SET w_ytd = w_ytd + $1 WHERE w_id = $2",
		"SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = $2"},
	oltp.StepPayDistrict: {
		"UPDATE district SET d_ytd = d_ytd + $1 WHERE d_w_id = $2 AND d_id = $3",
		"SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = $2 AND d_id = $3"},
	oltp.StepPayBadCredit: {`UPDATE customer SET c_balance = c_balance - $1, c_ytd_payment = c_ytd_payment + $1,
		c_payment_cnt = c_payment_cnt + 1, c_data = LEFT(CONCAT_WS(' ', $2, $3, $4, $5, $6, $1, '|', c_data), 500)
		WHERE c_w_id = $4 AND c_d_id = $3 AND c_id = $2`},
	oltp.StepDeliverOrder: {
		"UPDATE orders SET o_carrier_id = $1 WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4",
		"SELECT o_c_id FROM orders WHERE o_w_id = $2 AND o_d_id = $3 AND o_id = $4"},
	oltp.StepDeliverLines: {
		"UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3",
		"SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = $1 AND ol_d_id = $2 AND ol_o_id = $3"},
})

// flowStmt is one of the flow's statements prepared, and the step's
// arguments its question marks take, in order.
type flowStmt struct {
	stmt *sql.Stmt
	args []int
}

// flowConn is the client flow's statements on one session.
type flowConn struct {
	*session
	stmts [flowSteps][]flowStmt
	bound []any
}

const flowSteps = len(oltp.FlowSQL{})

// newClientExec prepares the flow's statements on s, which closes them.
func newClientExec(ctx context.Context, s *session) (*clientExec, error) {
	c := &flowConn{session: s}
	s.stmts = map[string]*sql.Stmt{}
	for step, texts := range flowSQL {
		for i, text := range texts {
			q, args := questionMarks(text)
			st, err := s.conn.PrepareContext(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("prepare %q: %w", q, err)
			}
			s.stmts[fmt.Sprintf("flow %d.%d", step, i)] = st
			c.stmts[step] = append(c.stmts[step], flowStmt{st, args})
		}
	}
	return &clientExec{s, oltp.NewClientFlow(c, flowSQL)}, nil
}

// questionMarks rewrites PostgreSQL's placeholders ($n, the n-th argument)
// as MariaDB's (?, the next argument in order), and says which argument
// each question mark takes, from 0.
func questionMarks(text string) (string, []int) {
	var b []byte
	var args []int
	for i := 0; i < len(text); i++ {
		if text[i] != '$' {
			b = append(b, text[i])
			continue
		}
		n := 0
		for i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9' {
			i++
			n = n*10 + int(text[i]-'0')
		}
		b = append(b, '?')
		args = append(args, n-1)
	}
	return string(b), args
}

func (c *flowConn) bind(st *flowStmt, args []any) []any {
	c.bound = c.bound[:0]
	for _, i := range st.args {
		c.bound = append(c.bound, args[i])
	}
	return c.bound
}

func (c *flowConn) Begin(ctx context.Context) error    { return c.plain(ctx, "START TRANSACTION") }
func (c *flowConn) Commit(ctx context.Context) error   { return c.plain(ctx, "COMMIT") }
func (c *flowConn) Rollback(ctx context.Context) error { return c.plain(ctx, "ROLLBACK") }

func (c *flowConn) plain(ctx context.Context, q string) error {
	_, err := c.conn.ExecContext(ctx, q)
	return c.done(err)
}

func (c *flowConn) Exec(ctx context.Context, s oltp.FlowStep, i int, args []any) error {
	st := &c.stmts[s][i]
	_, err := st.stmt.ExecContext(ctx, c.bind(st, args)...)
	return c.done(err)
}

func (c *flowConn) Row(ctx context.Context, s oltp.FlowStep, i int, args []any, dest []any) error {
	st := &c.stmts[s][i]
	err := st.stmt.QueryRowContext(ctx, c.bind(st, args)...).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return oltp.ErrNoRow
	}
	return c.done(err)
}

func (c *flowConn) Drain(ctx context.Context, s oltp.FlowStep, i int, args []any) error {
	st := &c.stmts[s][i]
	rows, err := st.stmt.QueryContext(ctx, c.bind(st, args)...)
	if err != nil {
		return c.done(err)
	}
	for rows.Next() {
	}
	rows.Close()
	return c.done(rows.Err())
}

func (*flowConn) Money(cents int) any { return amount(cents) }

func (*flowConn) Sum() any { return new(sql.NullString) }
