package oltp

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Mode is how the transactions reach the server.
type Mode string

// The two implementations of the five transactions. Their numbers are not
// comparable with each other: results always say which ran.
const (
	ModeProcedures Mode = "procedures" // one PL/pgSQL call per transaction, as HammerDB
	ModeClient     Mode = "client"     // prepared statements driven from the client
)

// errRollback is the New-Order that rolled back on its unused item, as the
// specification requires of 1% of them: an outcome, not an error.
var errRollback = errors.New("new-order rolled back on an unused item (expected)")

// executor runs the five transactions on one connection.
type executor interface {
	newOrder(ctx context.Context, in *NewOrderInput) error
	payment(ctx context.Context, in *PaymentInput) error
	orderStatus(ctx context.Context, in *OrderStatusInput) error
	delivery(ctx context.Context, in *DeliveryInput) error
	stockLevel(ctx context.Context, in *StockLevelInput) error
}

func newExecutor(mode Mode, conn *pgx.Conn) executor {
	if mode == ModeClient {
		return &clientExec{conn: conn}
	}
	return &procExec{conn: conn}
}

// procExec calls the PL/pgSQL functions of functionDDL.
type procExec struct{ conn *pgx.Conn }

func (e *procExec) newOrder(ctx context.Context, in *NewOrderInput) error {
	allLocal := 0
	if in.AllLocal {
		allLocal = 1
	}
	_, err := e.conn.Exec(ctx, "SELECT tpcc_new_order($1, $2, $3, $4, $5, $6, $7)",
		in.W, in.D, in.C, allLocal, in.ItemIDs, in.SupplyW, in.Qty)
	if isExpectedRollback(err) {
		return errRollback
	}
	return err
}

func (e *procExec) payment(ctx context.Context, in *PaymentInput) error {
	_, err := e.conn.Exec(ctx, "SELECT tpcc_payment($1, $2, $3, $4, $5, $6, $7::int / 100.0)",
		in.W, in.D, in.CW, in.CD, in.C, in.CLast, in.AmountCents)
	return err
}

func (e *procExec) orderStatus(ctx context.Context, in *OrderStatusInput) error {
	_, err := e.conn.Exec(ctx, "SELECT tpcc_order_status($1, $2, $3, $4)", in.W, in.D, in.C, in.CLast)
	return err
}

func (e *procExec) delivery(ctx context.Context, in *DeliveryInput) error {
	_, err := e.conn.Exec(ctx, "SELECT tpcc_delivery($1, $2)", in.W, in.Carrier)
	return err
}

func (e *procExec) stockLevel(ctx context.Context, in *StockLevelInput) error {
	_, err := e.conn.Exec(ctx, "SELECT tpcc_stock_level($1, $2, $3)", in.W, in.D, in.Threshold)
	return err
}

func isExpectedRollback(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == ExpectedRollback
}

// isRetryable reports the conflicts a correct driver still meets under
// concurrency (serialization failure, deadlock): counted as errors, the run
// goes on.
func isRetryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}
