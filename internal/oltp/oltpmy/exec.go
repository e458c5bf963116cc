package oltpmy

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// session is one user's connection and its prepared statements; its
// methods are the Session's besides the five transactions.
type session struct {
	conn   conn
	stmts  map[string]*sql.Stmt
	broken bool // a transaction failed for want of the connection
	// galera: the session is on a Galera node, whose conflicts with the
	// other nodes' writes it retries (retry); retried counts the last
	// transaction's retries.
	galera  bool
	retried int
}

// maxCertRetries bounds the retries of one transaction that lost a
// Galera conflict: a few, as the conflict is with one other node's write
// and the retry sees it committed; a transaction that loses more often
// fails, counted under "certification".
const maxCertRetries = 3

// certification is the error class of a Galera node's conflicts.
const certification = "certification"

// retry runs one transaction, again while Again says so.
func (s *session) retry(f func() error) error {
	for attempt := 0; ; attempt++ {
		if err := f(); !s.Again(attempt, err) {
			return err
		}
	}
}

// Again says whether a transaction that ended in err on its attempt-th
// run (from 0) runs again: when it lost a Galera conflict, a write set
// that failed certification at commit, or a local transaction aborted by
// another node's applied write (a brute-force abort). MariaDB reports both
// as a deadlock (1213, 40001), and the procedures and the client flow have
// rolled the transaction back by then.
func (s *session) Again(attempt int, err error) bool {
	s.retried = attempt
	if !s.galera || !isConflict(err) || attempt >= maxCertRetries {
		return false
	}
	s.retried++
	return true
}

// Retried is how often the last transaction was retried, and why (see
// oltp.Retrier).
func (s *session) Retried() (string, int) { return certification, s.retried }

func isConflict(err error) bool {
	e, ok := mysqlErr(err)
	return ok && e.Number == 1213
}

// prepare makes the server prepare each statement once for the session
// (binary protocol: each execution is one round trip).
func (s *session) prepare(ctx context.Context, texts map[string]string) error {
	s.stmts = map[string]*sql.Stmt{}
	for name, q := range texts {
		st, err := s.conn.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", name, err)
		}
		s.stmts[name] = st
	}
	return nil
}

func (s *session) Closed() bool { return s.broken }

func (s *session) Close() {
	for _, st := range s.stmts {
		st.Close()
	}
	s.conn.close()
}

// FlushStats does nothing: performance_schema publishes at once (see
// control.StatsFlush), so the workload never asks.
func (s *session) FlushStats(context.Context) error { return nil }

// ErrorClass is a failed transaction's SQLSTATE and MariaDB error number
// (MariaDB gives most errors the state HY000), or "connection" when no
// server error came back.
//
// On a Galera node a deadlock is "certification": a conflict with another
// node's write, which MariaDB reports as a deadlock, as it does a local
// one (the node's wsrep_local_cert_failures and wsrep_local_bf_aborts,
// under the step's observe, count Galera's own).
func (s *session) ErrorClass(err error) string {
	if s.galera && isConflict(err) {
		return certification
	}
	if e, ok := mysqlErr(err); ok {
		return string(e.SQLState[:]) + "/" + strconv.Itoa(int(e.Number))
	}
	return "connection"
}

// Fault names a failure that no later transaction outlives: the storage
// refused (disk full, I/O error) or the server went away.
func (s *session) Fault(err error) error { return serverFault(err, s.broken || connectionLost(err)) }

// done notes whether err took the connection with it, and passes it on.
func (s *session) done(err error) error {
	if err != nil && connectionLost(err) {
		s.broken = true
	}
	return err
}

// MariaDB's error numbers that say the storage under the database
// refused or failed, or the server is going.
var (
	diskFull      = map[uint16]bool{1114: true, 1021: true} // table full (InnoDB cannot extend), disk full
	storageFailed = map[uint16]bool{
		2: true, 3: true, // EE_READ, EE_WRITE: a read or write of a file failed
		1026: true, 1030: true, // error writing a file; error N from the storage engine
		1034: true, 1712: true, // index corrupt
		1180: true, // error during COMMIT
		1812: true, // tablespace missing
	}
	serverGone = map[uint16]bool{
		1053: true,             // server shutdown in progress
		1152: true, 1184: true, // connection aborted
		1927: true,             // connection killed
		2006: true, 2013: true, // server gone, lost during query
	}
)

func serverFault(err error, lost bool) error {
	if err == nil || errors.Is(err, oltp.ErrRolledBack) {
		return nil
	}
	if e, ok := mysqlErr(err); ok {
		full := diskFull[e.Number] || storageFailed[e.Number] && noSpace(e.Message)
		switch {
		case full:
			return fmt.Errorf("the disk under the database is full (%d %s): free space on it or choose a larger --path", e.Number, e.Message)
		case storageFailed[e.Number]:
			return fmt.Errorf("the storage under the database failed (%d %s): see logs/server.log", e.Number, e.Message)
		case serverGone[e.Number]:
			return fmt.Errorf("the server stopped (%d %s): see logs/server.log", e.Number, e.Message)
		}
		return nil
	}
	if lost {
		return fmt.Errorf("the connection to the server was lost (%v): the server may have stopped, see logs/server.log", err)
	}
	return nil
}

// noSpace says an error's message is the OS's ENOSPC.
func noSpace(msg string) bool {
	return strings.Contains(msg, "No space left") || strings.Contains(msg, "Errcode: 28") || strings.Contains(msg, "error 28 ")
}

// connectionLost says err ended the session's connection: the driver's
// broken-connection errors, a network error, or the server's word that it
// closes the session.
func connectionLost(err error) bool {
	if e, ok := mysqlErr(err); ok {
		return serverGone[e.Number]
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// procExec calls the stored procedures of procedures, on a goroutine a
// user for the reason unpolled gives (rawProcExec is the polling driver's).
type procExec struct {
	*session
	unpolled string
}

// Unpolled says why the session runs on a goroutine (oltp.Unpolled).
func (e *procExec) Unpolled() string { return e.unpolled }

var procStatements = map[string]string{
	"new_order":    "CALL tpcc_new_order(?, ?, ?, ?, ?, ?, ?)",
	"payment":      "CALL tpcc_payment(?, ?, ?, ?, ?, ?, ?)",
	"order_status": "CALL tpcc_order_status(?, ?, ?, ?)",
	"delivery":     "CALL tpcc_delivery(?, ?)",
	"stock_level":  "CALL tpcc_stock_level(?, ?, ?)",
}

func (e *procExec) NewOrder(ctx context.Context, in *oltp.NewOrderInput) error {
	return e.retry(func() error {
		allLocal := 0
		if in.AllLocal {
			allLocal = 1
		}
		_, err := e.stmts["new_order"].ExecContext(ctx, in.W, in.D, in.C, allLocal,
			jsonInts(in.ItemIDs), jsonInts(in.SupplyW), jsonInts(in.Qty))
		if isExpectedRollback(err) {
			return oltp.ErrRolledBack
		}
		return e.done(err)
	})
}

// jsonInts is a JSON array of vs, New-Order's lines for its procedure.
func jsonInts(vs []int32) string { return string(appendJSONInts(make([]byte, 0, 8*len(vs)+2), vs)) }

func appendJSONInts(b []byte, vs []int32) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}

func (e *procExec) Payment(ctx context.Context, in *oltp.PaymentInput) error {
	return e.retry(func() error {
		_, err := e.stmts["payment"].ExecContext(ctx, in.W, in.D, in.CW, in.CD, in.C, in.CLast, amount(in.AmountCents))
		return e.done(err)
	})
}

// amount is a payment's amount in cents as an exact decimal.
func amount(cents int) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func (e *procExec) OrderStatus(ctx context.Context, in *oltp.OrderStatusInput) error {
	return e.retry(func() error {
		_, err := e.stmts["order_status"].ExecContext(ctx, in.W, in.D, in.C, in.CLast)
		return e.done(err)
	})
}

func (e *procExec) Delivery(ctx context.Context, in *oltp.DeliveryInput) error {
	return e.retry(func() error {
		var delivered int
		err := e.stmts["delivery"].QueryRowContext(ctx, in.W, in.Carrier).Scan(&delivered)
		in.Skipped = tpcc.DistrictsPerWarehouse - delivered
		return e.done(err)
	})
}

func (e *procExec) StockLevel(ctx context.Context, in *oltp.StockLevelInput) error {
	return e.retry(func() error {
		_, err := e.stmts["stock_level"].ExecContext(ctx, in.W, in.D, in.Threshold)
		return e.done(err)
	})
}

func isExpectedRollback(err error) bool {
	e, ok := mysqlErr(err)
	return ok && string(e.SQLState[:]) == expectedRollback
}
