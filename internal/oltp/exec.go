package oltp

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
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
	prepare(ctx context.Context) error
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

// procStatements are prepared once per connection under these names. pgx's
// automatic statement cache would instead drop and re-prepare a statement
// after every error, so each expected New-Order rollback would cost two more
// round trips and server transactions, inflating tpm_db and latency.
var procStatements = map[string]string{
	"new_order":    "SELECT tpcc_new_order($1, $2, $3, $4, $5, $6, $7)",
	"payment":      "SELECT tpcc_payment($1, $2, $3, $4, $5, $6, $7::int / 100.0)",
	"order_status": "SELECT tpcc_order_status($1, $2, $3, $4)",
	"delivery":     "SELECT tpcc_delivery($1, $2)",
	"stock_level":  "SELECT tpcc_stock_level($1, $2, $3)",
}

func (e *procExec) prepare(ctx context.Context) error {
	for name, sql := range procStatements {
		if _, err := e.conn.Prepare(ctx, name, sql); err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
	}
	return nil
}

func (e *procExec) newOrder(ctx context.Context, in *NewOrderInput) error {
	allLocal := 0
	if in.AllLocal {
		allLocal = 1
	}
	_, err := e.conn.Exec(ctx, "new_order",
		in.W, in.D, in.C, allLocal, in.ItemIDs, in.SupplyW, in.Qty)
	if isExpectedRollback(err) {
		return errRollback
	}
	return err
}

func (e *procExec) payment(ctx context.Context, in *PaymentInput) error {
	_, err := e.conn.Exec(ctx, "payment",
		in.W, in.D, in.CW, in.CD, in.C, in.CLast, in.AmountCents)
	return err
}

func (e *procExec) orderStatus(ctx context.Context, in *OrderStatusInput) error {
	_, err := e.conn.Exec(ctx, "order_status", in.W, in.D, in.C, in.CLast)
	return err
}

func (e *procExec) delivery(ctx context.Context, in *DeliveryInput) error {
	var done int
	err := e.conn.QueryRow(ctx, "delivery", in.W, in.Carrier).Scan(&done)
	in.Skipped = tpcc.DistrictsPerWarehouse - done
	return err
}

func (e *procExec) stockLevel(ctx context.Context, in *StockLevelInput) error {
	_, err := e.conn.Exec(ctx, "stock_level", in.W, in.D, in.Threshold)
	return err
}

func isExpectedRollback(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == ExpectedRollback
}
