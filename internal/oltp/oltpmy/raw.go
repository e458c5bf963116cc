package oltpmy

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// rawProcExec is procedures mode on the polling driver (oltp.RawSession):
// go-sql-driver connects and prepares as for procExec, whose methods it
// keeps, until FD takes the socket; from then on each transaction is its
// CALL as a COM_QUERY and the answer is parsed here. The protocol has no
// pipelining, but the polling driver sends one request a connection at a
// time.
type rawProcExec struct {
	procExec
	tap  *tap
	eofs bool // the server ends column definitions with an EOF packet (no CLIENT_DEPRECATE_EOF)
	fd   int  // the socket taken; 0 before FD, -1 once closed
}

var _ oltp.RawSession = (*rawProcExec)(nil)

func newRawProcExec(s *session, tp *tap) *rawProcExec {
	return &rawProcExec{procExec: procExec{session: s}, tap: tp, eofs: tp.caps&capDeprecateEOF == 0}
}

// FD takes the socket from the driver: a duplicate stays, non-blocking as
// Go's sockets are, and the driver's connection is closed without ending
// the server's session (see tap), which also takes the socket out of Go's
// network poller.
func (e *rawProcExec) FD() (int, error) {
	if e.fd > 0 {
		return e.fd, nil
	}
	if !e.tap.frames.whole() {
		return 0, errors.New("take the socket: the driver stopped inside a packet")
	}
	sc, ok := e.tap.Conn.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("take the socket: the connection %T has none", e.tap.Conn)
	}
	rc, err := sc.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(s uintptr) { e.fd, err = syscall.Dup(int(s)) })
		err = cmp.Or(cerr, err)
	}
	if err != nil {
		e.fd = 0
		return 0, fmt.Errorf("take the socket: %w", err)
	}
	e.tap.taken.Store(true)
	e.session.Close()
	return e.fd, nil
}

// Close ends a session whose socket the polling driver took with a
// COM_QUIT, as the driver would; once.
func (e *rawProcExec) Close() {
	switch {
	case e.fd == 0:
		e.session.Close()
		return
	case e.fd < 0:
		return
	}
	quit := [...]byte{1, 0, 0, 0, comQuit}
	_, _ = syscall.Write(e.fd, quit[:])
	_ = syscall.Close(e.fd)
	e.fd = -1
}

// The commands the polling path sends.
const (
	comQuit  = 0x01
	comQuery = 0x03
	comPing  = 0x0e
)

// callPrefixes are the CALLs of procStatements up to their arguments, by
// transaction type.
var callPrefixes = func() (p []string) {
	for _, name := range oltp.TxNames() {
		head, _, _ := strings.Cut(procStatements[name], "(")
		p = append(p, head+"(")
	}
	return p
}()

// AppendCall appends the CALL of t's procedure on in as a COM_QUERY, the
// inputs written as literals, as procExec binds them.
func (e *rawProcExec) AppendCall(buf []byte, t oltp.TxType, in any) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, comQuery)
	buf = append(buf, callPrefixes[t]...)
	switch in := in.(type) {
	case *oltp.NewOrderInput:
		allLocal := 0
		if in.AllLocal {
			allLocal = 1
		}
		buf = appendInts(buf, in.W, in.D, in.C, allLocal)
		for _, vs := range [...][]int32{in.ItemIDs, in.SupplyW, in.Qty} {
			buf = append(buf, ", '"...)
			buf = append(appendJSONInts(buf, vs), '\'')
		}
	case *oltp.PaymentInput:
		buf = appendInts(buf, in.W, in.D, in.CW, in.CD, in.C)
		buf = appendName(append(buf, ", "...), in.CLast)
		buf = appendAmount(append(buf, ", "...), in.AmountCents)
	case *oltp.OrderStatusInput:
		buf = appendInts(buf, in.W, in.D, in.C)
		buf = appendName(append(buf, ", "...), in.CLast)
	case *oltp.DeliveryInput:
		buf = appendInts(buf, in.W, in.Carrier)
	case *oltp.StockLevelInput:
		buf = appendInts(buf, in.W, in.D, in.Threshold)
	}
	return endPacket(append(buf, ')'), start)
}

// AppendFlushStats appends a COM_PING: FlushStats does nothing on
// MariaDB (performance_schema publishes at once), and the workload never
// asks for it here (control.StatsFlush), so its answer is an OK packet.
func (e *rawProcExec) AppendFlushStats(buf []byte) []byte {
	start := len(buf)
	return endPacket(append(buf, 0, 0, 0, 0, comPing), start)
}

// endPacket writes the length of the packet that begins at buf[start]
// (sequence 0: a command's first packet) into its header.
func endPacket(buf []byte, start int) []byte {
	n := len(buf) - start - 4
	buf[start], buf[start+1], buf[start+2], buf[start+3] = byte(n), byte(n>>8), byte(n>>16), 0
	return buf
}

// appendInts appends vs, each after a comma but the first.
func appendInts(buf []byte, vs ...int) []byte {
	for i, v := range vs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = strconv.AppendInt(buf, int64(v), 10)
	}
	return buf
}

// appendName appends a customer's last name as a string literal: tpcc's
// names are upper-case syllables, with nothing to escape.
func appendName(buf []byte, name string) []byte {
	return append(append(append(buf, '\''), name...), '\'')
}

// appendAmount appends an amount in cents as the exact decimal amount
// gives.
func appendAmount(buf []byte, cents int) []byte {
	buf = append(strconv.AppendInt(buf, int64(cents/100), 10), '.')
	return append(buf, byte('0'+cents%100/10), byte('0'+cents%10))
}

// Answer reads the answer to one request (see readAnswer) and gives the
// outcome procExec's method would: Delivery's districts, New-Order's
// expected rollback as oltp.ErrRolledBack, a server error as the driver's
// MySQLError. A malformed answer breaks the session, all of buf taken. A
// CALL is one round trip: there is never a next request.
func (e *rawProcExec) Answer(buf []byte, t oltp.TxType, in any, _ []byte) (int, []byte, error) {
	n, a, err := readAnswer(buf, e.eofs)
	if err != nil {
		e.broken = true
		return len(buf), nil, fmt.Errorf("the server's answer to %s: %w", t, err)
	}
	if n == 0 {
		return 0, nil, nil
	}
	if a.err != nil {
		if _, ok := in.(*oltp.NewOrderInput); ok && string(a.err[4:9]) == expectedRollback {
			return n, nil, oltp.ErrRolledBack
		}
		return n, nil, e.done(serverError(a.err))
	}
	if dl, ok := in.(*oltp.DeliveryInput); ok {
		if !a.row {
			return n, nil, errors.New("tpcc_delivery answered no row")
		}
		dl.Skipped = tpcc.DistrictsPerWarehouse - a.first
	}
	return n, nil, nil
}
