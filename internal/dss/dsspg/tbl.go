package dsspg

import (
	"bytes"
	"io"
)

// tblReader turns dbgen's .tbl lines ("a|b|c|\n") into COPY's text format
// ("a|b|c\n") by dropping each line's closing delimiter as the bytes pass.
// Text COPY parses about 10% faster than CSV, and .tbl has no quotes to
// parse: dbgen's text holds no '|', '\' or quote.
type tblReader struct {
	r       io.Reader
	buf     []byte
	lo, hi  int  // buf[lo:hi] is ready for the caller
	pending bool // a '|' ended the last read: drop it if '\n' comes next
}

func newTblReader(r io.Reader) *tblReader {
	return &tblReader{r: r, buf: make([]byte, 256<<10)}
}

func (t *tblReader) Read(p []byte) (int, error) {
	if t.lo == t.hi {
		if err := t.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, t.buf[t.lo:t.hi])
	t.lo += n
	return n, nil
}

// fill reads the next chunk and compacts "|\n" to "\n" in place. A '|' at
// the chunk's end is held back until the next byte shows what it closes.
func (t *tblReader) fill() error {
	start := 0
	if t.pending {
		t.buf[0], start = '|', 1
	}
	n, err := t.r.Read(t.buf[start:])
	n += start
	if n == start && err != nil {
		if t.pending {
			t.pending = false
			t.lo, t.hi = 0, 1 // a last '|' with no newline after it is data
			return nil
		}
		return err
	}
	if t.pending = t.buf[n-1] == '|'; t.pending {
		n--
	}
	out, in := 0, 0
	for in < n {
		i := bytes.IndexByte(t.buf[in:n], '\n')
		if i < 0 {
			out += copy(t.buf[out:], t.buf[in:n])
			break
		}
		end := in + i // the newline
		if end > 0 && t.buf[end-1] == '|' && end-1 >= in {
			out += copy(t.buf[out:], t.buf[in:end-1])
		} else {
			out += copy(t.buf[out:], t.buf[in:end])
		}
		t.buf[out] = '\n'
		out++
		in = end + 1
	}
	t.lo, t.hi = 0, out
	return nil
}
