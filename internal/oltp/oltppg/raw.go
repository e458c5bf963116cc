package oltppg

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// procExec and clientExec are oltp.RawSessions: the polling driver takes
// the connection's socket from pgconn and writes its Bind, Execute and
// Sync and reads the answers itself, to the end of the session.
var (
	_ oltp.RawSession = (*procExec)(nil)
	_ oltp.RawSession = (*clientExec)(nil)
)

// rawSocket is a session whose socket the polling driver may take.
type rawSocket struct {
	session
	pc  *pgconn.PgConn
	raw int // the socket the polling driver took from pgconn (FD); 0 before, -1 closed
}

// FD takes the socket out of pgconn and out of Go's network poller, whose
// own epoll would otherwise wake an idle thread at every answer for
// nothing (a fifth of the polling driver's CPU): a duplicate of it stays,
// non-blocking as Go's sockets are, and the original is closed.
func (e *rawSocket) FD() (int, error) {
	if e.raw > 0 {
		return e.raw, nil
	}
	hj, err := e.pc.Hijack()
	if err != nil {
		return 0, err
	}
	sc, ok := hj.Conn.(syscall.Conn)
	if !ok {
		hj.Conn.Close()
		return 0, fmt.Errorf("the connection %T has no socket", hj.Conn)
	}
	rc, err := sc.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(s uintptr) { e.raw, err = syscall.Dup(int(s)) })
		err = cmp.Or(cerr, err)
	}
	hj.Conn.Close()
	if err != nil {
		e.raw = 0
		return 0, fmt.Errorf("take the socket: %w", err)
	}
	return e.raw, nil
}

// Close ends a session whose socket the polling driver took with
// Terminate, as pgconn would.
func (e *rawSocket) Close() {
	if e.raw <= 0 {
		e.session.Close()
		return
	}
	terminate, _ := (&pgproto3.Terminate{}).Encode(nil)
	_, _ = syscall.Write(e.raw, terminate)
	_ = syscall.Close(e.raw)
	e.raw = -1
}

// AppendFlushStats appends FlushStats' statement, prepared as
// flush_stats, in the extended protocol as the calls are.
func (e *rawSocket) AppendFlushStats(buf []byte) []byte {
	buf, _ = (&pgproto3.Bind{PreparedStatement: "flush_stats"}).Encode(buf)
	buf, _ = (&pgproto3.Execute{}).Encode(buf)
	buf, _ = (&pgproto3.Sync{}).Encode(buf)
	return buf
}

// AppendCall appends the extended-protocol call of in's procedure, as
// call sends it through pgconn: binary parameters and result.
func (e *procExec) AppendCall(buf []byte, _ oltp.TxType, in any) []byte {
	name := e.encode(in)
	bind := pgproto3.Bind{PreparedStatement: name, ParameterFormatCodes: allBinary, Parameters: e.params.values(), ResultFormatCodes: allBinary}
	buf, _ = bind.Encode(buf) // fails only beyond 65535 parameters
	buf, _ = (&pgproto3.Execute{}).Encode(buf)
	buf, _ = (&pgproto3.Sync{}).Encode(buf)
	return buf
}

// Answer parses the messages of one answer up to ReadyForQuery: the first
// column of a data row is the procedure's result, an ErrorResponse its
// error; in is nil for a flush's answer.
func (e *procExec) Answer(buf []byte, _ oltp.TxType, in any, _ []byte) (int, []byte, error) {
	var (
		result int
		err    error
	)
	for off := 0; len(buf)-off >= 5; {
		typ := buf[off]
		size := int(binary.BigEndian.Uint32(buf[off+1:]))
		if size < 4 || len(buf)-off < 1+size {
			return 0, nil, nil
		}
		body := buf[off+5 : off+1+size]
		off += 1 + size
		switch typ {
		case 'D':
			// int16 columns, then each column's int32 length and bytes.
			if len(body) >= 10 && binary.BigEndian.Uint16(body) > 0 && binary.BigEndian.Uint32(body[2:]) == 4 {
				result = int(int32(binary.BigEndian.Uint32(body[6:])))
			}
		case 'E':
			err = answerError(body, in)
		case 'Z':
			if in == nil {
				return off, nil, err // a flush: no outcome to settle
			}
			return off, nil, outcome(in, result, err)
		}
	}
	return 0, nil, nil
}

// answerError is an ErrorResponse's error: a New-Order's expected
// rollback as oltp.ErrRolledBack at once (the decoding and the PgError
// were the polling driver's only allocations), any other decoded.
func answerError(body []byte, in any) error {
	if _, ok := in.(*oltp.NewOrderInput); ok && hasErrorCode(body, expectedRollback) {
		return oltp.ErrRolledBack
	}
	var er pgproto3.ErrorResponse
	if err := er.Decode(body); err != nil {
		return fmt.Errorf("a malformed error from the server: %w", err)
	}
	return pgconn.ErrorResponseToPgError(&er)
}

// hasErrorCode says whether an ErrorResponse's SQLSTATE (field C) is
// code: fields are a type byte and a NUL-terminated string, ending with a
// NUL.
func hasErrorCode(body []byte, code string) bool {
	for len(body) > 1 {
		typ := body[0]
		end := bytes.IndexByte(body[1:], 0)
		if end < 0 {
			return false
		}
		if typ == 'C' {
			return string(body[1:1+end]) == code
		}
		body = body[2+end:]
	}
	return false
}
