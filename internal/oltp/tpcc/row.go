package tpcc

import (
	"encoding/binary"
	"time"
)

// Format is the form AppendBatchAs writes rows in.
type Format uint8

const (
	// Text is COPY's text format: tab-separated columns, \N for NULL, a
	// line a row (what LOAD DATA reads too).
	Text Format = iota
	// Binary is PostgreSQL's COPY binary format: the server reads its
	// integers, numerics and timestamps without parsing text.
	Binary
)

// Header opens a COPY stream in f, before the rows of its batches;
// Trailer closes it. Text has neither.
func (f Format) Header() []byte {
	if f == Binary {
		return binaryHeader
	}
	return nil
}

// Trailer closes a COPY stream in f (see Header).
func (f Format) Trailer() []byte {
	if f == Binary {
		return binaryTrailer
	}
	return nil
}

// String names the format as COPY's FORMAT option does.
func (f Format) String() string {
	if f == Binary {
		return "binary"
	}
	return "text"
}

var (
	binaryHeader  = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	binaryTrailer = []byte{0xff, 0xff}
	// pgEpoch is PostgreSQL's timestamp zero.
	pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// rowWriter appends a batch's fields in one format. In text every field
// ends with a tab, which the row's end turns into its newline; in binary
// a row opens with its column count and each field carries its length.
// The integer and numeric fields take the column's SQL type, which only
// binary shows.
type rowWriter struct {
	dst    []byte
	binary bool
	ts     []byte // the load time in this format, length included in binary
}

// row opens a row of n columns.
func (w *rowWriter) row(n int) {
	if w.binary {
		w.dst = binary.BigEndian.AppendUint16(w.dst, uint16(n))
	}
}

// end closes the row.
func (w *rowWriter) end() {
	if !w.binary {
		w.dst[len(w.dst)-1] = '\n'
	}
}

// open starts a variable-length field and returns where its length goes.
func (w *rowWriter) open() int {
	at := len(w.dst)
	if w.binary {
		w.dst = append(w.dst, 0, 0, 0, 0)
	}
	return at
}

// close ends the field open began at at.
func (w *rowWriter) close(at int) {
	if w.binary {
		binary.BigEndian.PutUint32(w.dst[at:], uint32(len(w.dst)-at-4))
		return
	}
	w.dst = append(w.dst, '\t')
}

// int2 and int4 append an integer of a smallint or an int column.
func (w *rowWriter) int2(v int) {
	if w.binary {
		w.dst = binary.BigEndian.AppendUint16(append(w.dst, 0, 0, 0, 2), uint16(v))
		return
	}
	w.dst = append(appendInt(w.dst, v), '\t')
}

func (w *rowWriter) int4(v int) {
	if w.binary {
		w.dst = binary.BigEndian.AppendUint32(append(w.dst, 0, 0, 0, 4), uint32(v))
		return
	}
	w.dst = append(appendInt(w.dst, v), '\t')
}

// fixed appends v/10^scale, a numeric of scale decimals (1 to 4).
func (w *rowWriter) fixed(v, scale int) {
	if w.binary {
		w.dst = appendNumeric(w.dst, v, scale)
		return
	}
	w.dst = append(appendFixed(w.dst, v, scale), '\t')
}

// time appends the load time.
func (w *rowWriter) time() { w.dst = append(w.dst, w.ts...) }

// null appends a NULL.
func (w *rowWriter) null() {
	if w.binary {
		w.dst = append(w.dst, 0xff, 0xff, 0xff, 0xff)
		return
	}
	w.dst = append(w.dst, `\N`+"\t"...)
}

// str appends a constant string.
func (w *rowWriter) str(s string) {
	at := w.open()
	w.dst = append(w.dst, s...)
	w.close(at)
}

// chars appends n random characters of cs.
func (w *rowWriter) chars(r *Rand, n int, cs *charset) {
	at := w.open()
	w.dst = r.appendChars(w.dst, n, cs)
	w.close(at)
}

// aString appends a random a-string [lo .. hi].
func (w *rowWriter) aString(r *Rand, lo, hi int) {
	at := w.open()
	w.dst = r.AppendAString(w.dst, lo, hi)
	w.close(at)
}

// data appends an a-string [lo .. hi] holding "ORIGINAL" one time in ten.
func (w *rowWriter) data(r *Rand, lo, hi int) {
	at := w.open()
	w.dst = r.AppendData(w.dst, lo, hi)
	w.close(at)
}

// appendNumeric appends v/10^scale (scale 1 to 4) as PostgreSQL's binary
// numeric, its length first: base-10000 digits without leading or
// trailing zero groups, the first one's weight, the sign, and the scale.
func appendNumeric(dst []byte, v, scale int) []byte {
	sign := uint16(0)
	if v < 0 {
		sign, v = 0x4000, -v
	}
	p := pow10[scale]
	var d [8]uint16 // the integer part's groups, least significant first, then reversed
	n := 0
	for ip := v / p; ip > 0; ip /= 10000 {
		d[n], n = uint16(ip%10000), n+1
	}
	weight := n - 1
	for i := range n / 2 {
		d[i], d[n-1-i] = d[n-1-i], d[i]
	}
	d[n], n = uint16(v%p*pow10[4-scale]), n+1 // the one fraction group
	digits := d[:n]
	for len(digits) > 0 && digits[0] == 0 {
		digits, weight = digits[1:], weight-1
	}
	for len(digits) > 0 && digits[len(digits)-1] == 0 {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		sign, weight = 0, 0
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+2*len(digits)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(digits)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(scale))
	for _, g := range digits {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}
