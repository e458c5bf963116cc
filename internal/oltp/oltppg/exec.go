package oltppg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

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
	_, err := s.conn.Exec(ctx, flushStatsSQL)
	return err
}

// flushStatsSQL forces the flush and reads a table: a backend with no
// table statistics pending skips the flush and keeps its transaction
// counts (PostgreSQL's pgstat_report_stat), so a flush right after a
// transaction that published itself would leave its own commit unpublished
// while calibra counts it as its own inside the window (tpm_db read up to
// 5 below tpm_client over 10 connections). The scan of one warehouse row
// makes a pending entry, so the flush always happens, with this commit.
const flushStatsSQL = "SELECT pg_stat_force_next_flush() FROM (SELECT FROM warehouse LIMIT 1) w"

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

// procExec calls the PL/pgSQL functions of functionDDL through pgconn, on
// statements it prepared itself, with binary parameters from reused
// buffers: a transaction is one round trip and no allocation.
type procExec struct {
	rawSocket
	params  binParams
	watched context.Context // the context whose end breaks the connection
	unwatch func() bool
}

// procStatements are prepared once per connection under these names, with
// the parameter types their encoders write. pgx's automatic statement
// cache would instead drop and re-prepare a statement after every error,
// so each expected New-Order rollback would cost two more round trips and
// server transactions, inflating tpm_db and latency.
var procStatements = []struct {
	name, sql string
	types     []uint32
}{
	{"new_order", "SELECT tpcc_new_order($1, $2, $3, $4, $5, $6, $7)",
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4ArrayOID, pgtype.Int4ArrayOID, pgtype.Int4ArrayOID}},
	{"payment", "SELECT tpcc_payment($1, $2, $3, $4, $5, $6, $7::int / 100.0)",
		[]uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.TextOID, pgtype.Int4OID}},
	{"order_status", "SELECT tpcc_order_status($1, $2, $3, $4)", []uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID, pgtype.TextOID}},
	{"delivery", "SELECT tpcc_delivery($1, $2)", []uint32{pgtype.Int4OID, pgtype.Int4OID}},
	{"stock_level", "SELECT tpcc_stock_level($1, $2, $3)", []uint32{pgtype.Int4OID, pgtype.Int4OID, pgtype.Int4OID}},
	{"flush_stats", flushStatsSQL, []uint32{}},
}

func (e *procExec) prepare(ctx context.Context) error {
	for _, s := range procStatements {
		sd, err := e.pc.Prepare(ctx, s.name, s.sql, nil)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", s.name, err)
		}
		if err := checkParamTypes(s.name, sd.ParamOIDs, s.types); err != nil {
			return err
		}
	}
	return nil
}

// allBinary asks for every parameter and result in binary format.
var allBinary = []int16{1}

// call runs a prepared statement on the parameters encoded and returns
// its first column as an int4, or 0 when it returned none. It hands pgconn
// no cancellable context, which would cost a registration per call;
// instead the connection is broken once when ctx ends (its deadline set in
// the past), which fails the call in flight as pgconn's own handler would.
func (e *procExec) call(ctx context.Context, name string) (int, error) {
	if ctx != e.watched {
		if e.unwatch != nil {
			e.unwatch()
		}
		e.watched = ctx
		e.unwatch = context.AfterFunc(ctx, func() { _ = e.pc.Conn().SetDeadline(time.Unix(1, 0)) })
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	rr := e.pc.ExecPrepared(context.Background(), name, e.params.values(), allBinary, allBinary)
	n := 0
	for rr.NextRow() {
		if v := rr.Values(); len(v) > 0 && len(v[0]) == 4 {
			n = int(int32(binary.BigEndian.Uint32(v[0])))
		}
	}
	_, err := rr.Close()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return n, err
}

func (e *procExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	return e.run(ctx, in)
}

func (e *procExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	return e.run(ctx, in)
}

func (e *procExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	return e.run(ctx, in)
}

func (e *procExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	return e.run(ctx, in)
}

func (e *procExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	return e.run(ctx, in)
}

// run calls the procedure of in's transaction and settles its outcome.
func (e *procExec) run(ctx context.Context, in any) error {
	result, err := e.call(ctx, e.encode(in))
	return outcome(in, result, err)
}

// encode writes the procedure's parameters for in and names its
// statement.
func (e *procExec) encode(in any) string {
	p := &e.params
	p.reset()
	switch in := in.(type) {
	case *oltp.NewOrderInput:
		p.int4(in.W)
		p.int4(in.D)
		p.int4(in.C)
		p.int4(allLocal(in))
		p.int4Array(in.ItemIDs)
		p.int4Array(in.SupplyW)
		p.int4Array(in.Qty)
		return "new_order"
	case *oltp.PaymentInput:
		p.int4(in.W)
		p.int4(in.D)
		p.int4(in.CW)
		p.int4(in.CD)
		p.int4(in.C)
		p.text(in.CLast)
		p.int4(in.AmountCents)
		return "payment"
	case *oltp.OrderStatusInput:
		p.int4(in.W)
		p.int4(in.D)
		p.int4(in.C)
		p.text(in.CLast)
		return "order_status"
	case *oltp.DeliveryInput:
		p.int4(in.W)
		p.int4(in.Carrier)
		return "delivery"
	case *oltp.StockLevelInput:
		p.int4(in.W)
		p.int4(in.D)
		p.int4(in.Threshold)
		return "stock_level"
	}
	panic(fmt.Sprintf("oltppg: no procedure for %T", in))
}

// outcome is a procedure call's result as the Session's method gives it:
// the expected New-Order rollback as oltp.ErrRolledBack, and the out
// values the procedures return (the customer paid, the districts
// delivered).
func outcome(in any, result int, err error) error {
	switch in := in.(type) {
	case *oltp.NewOrderInput:
		if isExpectedRollback(err) {
			return oltp.ErrRolledBack
		}
	case *oltp.PaymentInput:
		in.PaidC = result
	case *oltp.DeliveryInput:
		in.Skipped = tpcc.DistrictsPerWarehouse - result
	}
	return err
}

// isExpectedRollback looks for a PgError only in an error that is not
// already the rollback (the polling driver's Answer reads it in place):
// the variable errors.As fills escapes, an allocation a call.
func isExpectedRollback(err error) bool {
	if err == nil || err == oltp.ErrRolledBack { //nolint:errorlint // the polling driver's own, unwrapped
		return err != nil
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == expectedRollback
}
