package oltppg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// session is one user's connection; its methods are the Session's
// besides the five transactions.
type session struct{ conn *pgx.Conn }

func (s session) Closed() bool { return s.conn.IsClosed() }
func (s session) Close()       { s.conn.Close(context.Background()) }

// FlushStats makes the server publish this backend's statistics now, so
// that counters read at a window edge include exactly the transactions on
// the edge's side (PostgreSQL otherwise holds them for up to 10 s).
func (s session) FlushStats(ctx context.Context) error {
	_, err := s.conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	return err
}

// ErrorClass is a failed transaction's SQLSTATE, or "connection" when no
// server error came back.
func (session) ErrorClass(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "connection"
}

// Fault names a failure that no later transaction outlives: the storage
// refused (disk full, I/O error) or the server went away.
func (s session) Fault(err error) error { return serverFault(err, s.conn) }

func serverFault(err error, conn *pgx.Conn) error {
	if err == nil || errors.Is(err, oltp.ErrRolledBack) {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53100":
			return fmt.Errorf("the disk under the database is full (%s): free space on it or choose a larger --path", pgErr.Message)
		case strings.HasPrefix(pgErr.Code, "58"):
			return fmt.Errorf("the storage under the database failed (%s %s): see logs/server.log", pgErr.Code, pgErr.Message)
		case strings.HasPrefix(pgErr.Code, "57P"):
			return fmt.Errorf("the server stopped (%s): see logs/server.log", pgErr.Message)
		}
		return nil
	}
	if conn != nil && conn.IsClosed() {
		return fmt.Errorf("the connection to the server was lost (%v): the server may have stopped, see logs/server.log", err)
	}
	return nil
}

// procExec calls the PL/pgSQL functions of functionDDL.
type procExec struct{ session }

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

func (e *procExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	allLocal := 0
	if in.AllLocal {
		allLocal = 1
	}
	_, err := e.conn.Exec(ctx, "new_order",
		in.W, in.D, in.C, allLocal, in.ItemIDs, in.SupplyW, in.Qty)
	if isExpectedRollback(err) {
		return oltp.ErrRolledBack
	}
	return err
}

func (e *procExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	_, err := e.conn.Exec(ctx, "payment",
		in.W, in.D, in.CW, in.CD, in.C, in.CLast, in.AmountCents)
	return err
}

func (e *procExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	_, err := e.conn.Exec(ctx, "order_status", in.W, in.D, in.C, in.CLast)
	return err
}

func (e *procExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	var done int
	err := e.conn.QueryRow(ctx, "delivery", in.W, in.Carrier).Scan(&done)
	in.Skipped = tpcc.DistrictsPerWarehouse - done
	return err
}

func (e *procExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	_, err := e.conn.Exec(ctx, "stock_level", in.W, in.D, in.Threshold)
	return err
}

func isExpectedRollback(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == expectedRollback
}
