package oltppg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// colType is how a column travels in COPY's binary format.
type colType uint8

const (
	colText colType = iota // varchar and char: the bytes as they are
	colInt2
	colInt4
	colNumeric
	colTimestamp
)

// binaryTables are the tables COPY takes in binary, with their columns'
// types in tpcc's column order: those whose timestamps and numerics the
// server parses more slowly as text than in binary. Measured here, server
// CPU for 3 warehouses' order_line went from 0.85 s as text to 0.58-0.77 s
// in binary, customer's from 0.23-0.25 s to 0.17-0.19 s; stock's, all text
// but its ids, from 0.61-0.65 s to 0.65-0.82 s (binary is longer, and char
// columns cost the same), so stock stays text, and item, warehouse and
// district, a few megabytes, too.
var binaryTables = map[tpcc.Table][]colType{
	tpcc.OrderLine: {colInt4, colInt2, colInt4, colInt2, colInt4, colInt4, colTimestamp, colInt2, colNumeric, colText},
	tpcc.Orders:    {colInt4, colInt2, colInt4, colInt4, colTimestamp, colInt2, colInt2, colInt2},
	tpcc.History:   {colInt4, colInt2, colInt4, colInt2, colInt4, colTimestamp, colNumeric, colText},
	tpcc.NewOrder:  {colInt4, colInt2, colInt4},
	tpcc.Customer: {colInt4, colInt2, colInt4, colText, colText, colText, colText, colText, colText, colText, colText,
		colText, colTimestamp, colText, colNumeric, colNumeric, colNumeric, colNumeric, colInt4, colInt4, colText},
}

var binaryHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// pgEpoch is PostgreSQL's timestamp zero.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// toBinary appends to dst the COPY binary form of text, tpcc's COPY text
// (tab-separated, \N for NULL, a line a row) of columns of types.
func toBinary(dst, text []byte, types []colType) ([]byte, error) {
	dst = append(dst, binaryHeader...)
	var ts tsCache
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte{'\n'})
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(types)))
		for k, t := range types {
			f := line
			if i := bytes.IndexByte(line, '\t'); i >= 0 {
				f, line = line[:i], line[i+1:]
			} else if k != len(types)-1 {
				return dst, fmt.Errorf("a row of %d columns, want %d", k+1, len(types))
			}
			var err error
			if dst, err = appendField(dst, f, t, &ts); err != nil {
				return dst, err
			}
		}
	}
	return binary.BigEndian.AppendUint16(dst, 0xffff), nil
}

// appendField appends one field, its length first (-1 for NULL).
func appendField(dst, f []byte, t colType, ts *tsCache) ([]byte, error) {
	if len(f) == 2 && f[0] == '\\' && f[1] == 'N' {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff), nil
	}
	switch t {
	case colInt2:
		v, err := atoi(f)
		return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(dst, 2), uint16(v)), err
	case colInt4:
		v, err := atoi(f)
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(dst, 4), uint32(v)), err
	case colTimestamp:
		us, err := ts.micros(f)
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(dst, 8), uint64(us)), err
	case colNumeric:
		return appendNumeric(dst, f)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(f)))
	return append(dst, f...), nil
}

// atoi parses a decimal integer, perhaps negative.
func atoi(f []byte) (int64, error) {
	neg := len(f) > 0 && f[0] == '-'
	if neg {
		f = f[1:]
	}
	if len(f) == 0 || len(f) > 18 {
		return 0, fmt.Errorf("not an integer: %q", f)
	}
	var v int64
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not an integer: %q", f)
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// tsCache parses a timestamp once: the load writes one load time in every
// timestamp column.
type tsCache struct {
	text []byte
	us   int64
}

func (c *tsCache) micros(f []byte) (int64, error) {
	if c.text != nil && bytes.Equal(f, c.text) {
		return c.us, nil
	}
	t, err := time.Parse("2006-01-02 15:04:05.999999", string(f))
	if err != nil {
		return 0, err
	}
	c.text, c.us = append(c.text[:0], f...), t.Sub(pgEpoch).Microseconds()
	return c.us, nil
}

// appendNumeric appends a decimal ("-12.3400") as PostgreSQL's binary
// numeric: base-10000 digits, the first's weight, the sign, and the scale
// (the text's decimals).
func appendNumeric(dst, f []byte) ([]byte, error) {
	neg := len(f) > 0 && f[0] == '-'
	if neg {
		f = f[1:]
	}
	intPart, frac, _ := bytes.Cut(f, []byte{'.'})
	if len(intPart) == 0 || len(intPart) > 16 || len(frac) > 16 {
		return dst, fmt.Errorf("not a decimal: %q", f)
	}
	var digits [12]uint16
	n := 0
	// Integer groups of four from the right, then fraction groups from the left.
	groups := (len(intPart) + 3) / 4
	for g := range groups {
		end := len(intPart) - 4*(groups-1-g)
		v, err := atoi(intPart[max(0, end-4):end])
		if err != nil {
			return dst, err
		}
		digits[n], n = uint16(v), n+1
	}
	for i := 0; i < len(frac); i += 4 {
		var v uint16
		for k := i; k < i+4; k++ {
			v *= 10
			if k < len(frac) {
				if frac[k] < '0' || frac[k] > '9' {
					return dst, fmt.Errorf("not a decimal: %q", f)
				}
				v += uint16(frac[k] - '0')
			}
		}
		digits[n], n = v, n+1
	}
	weight := groups - 1
	d := digits[:n]
	for len(d) > 0 && d[0] == 0 { // leading zero groups
		d, weight = d[1:], weight-1
	}
	for len(d) > 0 && d[len(d)-1] == 0 { // trailing zero groups
		d = d[:len(d)-1]
	}
	sign := uint16(0)
	if neg && len(d) > 0 {
		sign = 0x4000
	}
	if len(d) == 0 {
		weight = 0
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+2*len(d)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(d)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(frac)))
	for _, v := range d {
		dst = binary.BigEndian.AppendUint16(dst, v)
	}
	return dst, nil
}
