package oltpmy

import (
	"encoding/binary"
	"errors"

	"github.com/go-sql-driver/mysql"
)

// The answer to a COM_QUERY, as the polling driver reads it: packets of a
// 3-byte length, a sequence number (1 for the first, counting up) and a
// payload. A CALL answers with the result sets its procedure returned,
// each a column count, its column definitions (and an EOF packet without
// CLIENT_DEPRECATE_EOF), its rows and a terminator with the server's
// status, then the CALL's own OK packet; SERVER_MORE_RESULTS_EXISTS in a
// status says more follows. An ERR packet ends the answer at any point.

// The first byte of an OK, EOF (or OK ending a result set) and ERR packet.
const (
	pktOK  = 0x00
	pktEOF = 0xfe
	pktERR = 0xff
)

// moreResults is SERVER_MORE_RESULTS_EXISTS in a status.
const moreResults = 0x0008

// maxPayload is a payload that goes on in the next packet: no packet of
// the answers the polling driver asks for comes near it.
const maxPayload = 1<<24 - 1

// answer is what the polling driver keeps of an answer: its first row's
// first column as an integer (Delivery's), and its ERR packet's payload.
type answer struct {
	row   bool
	first int
	err   []byte
}

// Where readAnswer stands in an answer.
const (
	atResult  = iota // an OK, an ERR or a result set's column count
	atColumns        // column definitions
	atColEOF         // the EOF after the column definitions
	atRows           // rows, to the result set's terminator
)

var errMalformed = errors.New("a malformed packet")

// readAnswer reads one whole answer from the front of buf: the bytes it
// took, 0 while the answer is incomplete; eofs says the server sends the
// EOF packets CLIENT_DEPRECATE_EOF drops. An error means the stream is
// not the answer it should be.
func readAnswer(buf []byte, eofs bool) (int, answer, error) {
	var a answer
	off, state, cols := 0, atResult, uint64(0)
	for seq := byte(1); ; seq++ {
		if len(buf)-off < 4 {
			return 0, a, nil
		}
		size := int(buf[off]) | int(buf[off+1])<<8 | int(buf[off+2])<<16
		if len(buf)-off-4 < size {
			return 0, a, nil
		}
		if buf[off+3] != seq || size == 0 || size == maxPayload {
			return 0, a, errMalformed
		}
		p := buf[off+4 : off+4+size]
		off += 4 + size
		if p[0] == pktERR { // no other packet begins so: no length-encoded value does
			if len(p) < 9 || p[3] != '#' {
				return 0, a, errMalformed
			}
			a.err = p
			return off, a, nil
		}
		switch state {
		case atResult:
			if p[0] == pktOK {
				if okStatus(p)&moreResults == 0 {
					return off, a, nil
				}
				continue
			}
			var n int
			if cols, n = lenenc(p); n == 0 || cols == 0 {
				return 0, a, errMalformed
			}
			state = atColumns
			if len(p) > n && p[n] == 0 { // MARIADB_CLIENT_CACHE_METADATA's "no metadata follows"
				state = afterColumns(eofs)
			}
		case atColumns:
			if cols--; cols == 0 {
				state = afterColumns(eofs)
			}
		case atColEOF:
			state = atRows
		case atRows:
			if p[0] != pktEOF {
				if !a.row {
					a.row, a.first = true, firstInt(p)
				}
				continue
			}
			status := okStatus(p)
			if eofs {
				status = eofStatus(p)
			}
			if status&moreResults == 0 {
				return off, a, nil
			}
			state = atResult
		}
	}
}

func afterColumns(eofs bool) int {
	if eofs {
		return atColEOF
	}
	return atRows
}

// okStatus is the status of an OK packet: after its header, affected rows
// and last insert id. A malformed one reads 0: no more results.
func okStatus(p []byte) uint16 {
	_, n := lenenc(p[1:])
	_, m := lenenc(p[1+n:])
	if at := 1 + n + m; n > 0 && m > 0 && len(p) >= at+2 {
		return binary.LittleEndian.Uint16(p[at:])
	}
	return 0
}

// eofStatus is the status of an EOF packet, after its warnings.
func eofStatus(p []byte) uint16 {
	if len(p) < 5 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[3:])
}

// lenenc reads a length-encoded integer: its value and size, 0 when b
// holds none (or NULL, 0xfb).
func lenenc(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := 0
	switch b[0] {
	case 0xfb, 0xff:
		return 0, 0
	case 0xfc:
		n = 3
	case 0xfd:
		n = 4
	case 0xfe:
		n = 9
	default:
		return uint64(b[0]), 1
	}
	if len(b) < n {
		return 0, 0
	}
	var v uint64
	for i := n - 1; i >= 1; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, n
}

// firstInt is a text row's first column as a decimal integer; 0 for NULL
// or anything else.
func firstInt(p []byte) int {
	size, n := lenenc(p)
	if n == 0 || uint64(len(p)-n) < size {
		return 0
	}
	v := 0
	for _, c := range p[n : n+int(size)] {
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + int(c-'0')
	}
	return v
}

// serverError is an ERR packet's error, as the driver gives it.
func serverError(p []byte) error {
	e := &mysql.MySQLError{Number: binary.LittleEndian.Uint16(p[1:]), Message: string(p[9:])}
	copy(e.SQLState[:], p[4:9])
	return e
}
