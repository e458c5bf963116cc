package oltppg

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// binParams encodes a prepared statement's parameters in PostgreSQL's
// binary format into buffers reused call after call: procedures mode's
// hot path then allocates nothing and skips pgx's per-call type planning,
// which was a tenth of the driver's CPU per transaction.
type binParams struct {
	buf  []byte
	ends []int
	vals [][]byte
}

func (p *binParams) reset() { p.buf, p.ends = p.buf[:0], p.ends[:0] }

func (p *binParams) end() { p.ends = append(p.ends, len(p.buf)) }

func (p *binParams) int4(v int) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(int32(v)))
	p.end()
}

func (p *binParams) text(s string) {
	p.buf = append(p.buf, s...)
	p.end()
}

func (p *binParams) int4Array(a []int32) {
	p.buf = appendInt4Array(p.buf, a)
	p.end()
}

// appendInt4Array appends array_send's format for a one-dimensional
// int4[].
func appendInt4Array(dst []byte, a []int32) []byte {
	dst = appendArrayHeader(dst, pgtype.Int4OID, len(a))
	for _, v := range a {
		dst = binary.BigEndian.AppendUint32(dst, 4)
		dst = binary.BigEndian.AppendUint32(dst, uint32(v))
	}
	return dst
}

// appendArrayHeader appends the header of a one-dimensional array of n
// elements of type elem, with no NULLs and a lower bound of 1.
func appendArrayHeader(dst []byte, elem uint32, n int) []byte {
	be := binary.BigEndian
	dst = be.AppendUint32(dst, 1) // dimensions
	dst = be.AppendUint32(dst, 0) // no NULLs
	dst = be.AppendUint32(dst, elem)
	dst = be.AppendUint32(dst, uint32(n))
	return be.AppendUint32(dst, 1) // lower bound
}

// values slices the buffer into one value a parameter. Each value is
// non-nil, even an empty text, since a nil value is SQL NULL.
func (p *binParams) values() [][]byte {
	p.vals = p.vals[:0]
	start := 0
	for _, e := range p.ends {
		p.vals = append(p.vals, p.buf[start:e:e])
		start = e
	}
	return p.vals
}

// checkParamTypes holds a prepared statement to the types its encoder
// writes, so a changed procedure signature fails at connection time with
// its name rather than as a garbled binary value mid-run.
func checkParamTypes(name string, got []uint32, want []uint32) error {
	if len(got) != len(want) {
		return fmt.Errorf("prepare %s: the server expects %d parameters, calibra sends %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("prepare %s: parameter $%d has type OID %d on the server, calibra sends %d", name, i+1, got[i], want[i])
		}
	}
	return nil
}
