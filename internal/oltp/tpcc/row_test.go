package tpcc

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// Binary numerics decode, by pgx's own decoder, to the text's value, with
// the text's decimals as their scale.
func TestAppendNumeric(t *testing.T) {
	for _, c := range []struct{ v, scale int }{{0, 2}, {5000000, 2}, {-1000, 2}, {1000, 2}, {1234, 4}, {12, 4},
		{5, 2}, {999999, 2}, {30000000, 2}, {123456789, 1}, {-1, 4}, {10000, 4}, {12345678901234, 2}} {
		text := string(appendFixed(nil, c.v, c.scale))
		enc := appendNumeric(nil, c.v, c.scale)
		if got := binary.BigEndian.Uint32(enc); int(got) != len(enc)-4 {
			t.Fatalf("%s: length word %d, %d bytes follow", text, got, len(enc)-4)
		}
		if !numericIs(t, enc[4:], text) {
			t.Errorf("%s: binary decodes otherwise", text)
		}
	}
}

// numericIs says whether the binary numeric enc holds text's value and
// scale.
func numericIs(t *testing.T, enc []byte, text string) bool {
	t.Helper()
	var n pgtype.Numeric
	if err := pgtype.NewMap().Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, enc, &n); err != nil {
		t.Fatalf("%s: pgx cannot decode it: %v", text, err)
	}
	got := new(big.Rat).SetInt(n.Int)
	exp := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(n.Exp, -n.Exp))), nil))
	if n.Exp < 0 {
		got.Quo(got, exp)
	} else {
		got.Mul(got, exp)
	}
	want, _ := new(big.Rat).SetString(text)
	_, frac, _ := bytes.Cut([]byte(text), []byte{'.'})
	return got.Cmp(want) == 0 && int(binary.BigEndian.Uint16(enc[6:])) == len(frac)
}

// Every table's batches carry the same values in both formats: a tuple
// a line, a field a column, NULL for \N, integers, numerics (by pgx's
// decoder) and the load time (µs since 2000) where the text has them, the
// other fields byte for byte.
func TestBinaryMatchesText(t *testing.T) {
	g := testGenerator(5)
	us := int64(binary.BigEndian.Uint64(g.tsBin[4:]))
	if want := testLoadTime.Sub(pgEpoch).Microseconds(); us != want {
		t.Fatalf("the load time is %d µs after 2000, want %d", us, want)
	}
	for _, tb := range Tables() {
		for _, b := range []int{0, g.Batches(tb) - 1} {
			text := rows(t, g.AppendBatch(nil, tb, b))
			p := g.AppendBatchAs(nil, tb, b, Binary)
			for i, row := range text {
				if len(p) < 2 || int(binary.BigEndian.Uint16(p)) != len(row) {
					t.Fatalf("%s batch %d tuple %d: not %d fields", tb, b, i, len(row))
				}
				p = p[2:]
				for k, f := range row {
					l := int32(binary.BigEndian.Uint32(p))
					p = p[4:]
					if l < 0 {
						if f != `\N` {
							t.Fatalf("%s tuple %d field %d: NULL for %q", tb, i, k, f)
						}
						continue
					}
					if !sameValue(t, p[:l], f, us) {
						t.Fatalf("%s tuple %d field %d: % x for %q", tb, i, k, p[:l], f)
					}
					p = p[l:]
				}
			}
			if len(p) != 0 {
				t.Errorf("%s batch %d: %d bytes after the last tuple", tb, b, len(p))
			}
		}
	}
}

// sameValue says whether binary field v holds text field f.
func sameValue(t *testing.T, v []byte, f string, us int64) bool {
	if string(v) == f {
		return true
	}
	n, err := strconv.ParseInt(f, 10, 64)
	switch {
	case err == nil && len(v) == 2:
		return int16(binary.BigEndian.Uint16(v)) == int16(n)
	case err == nil && len(v) == 4:
		return int32(binary.BigEndian.Uint32(v)) == int32(n)
	case len(v) == 8 && len(f) == len("2006-01-02 15:04:05.000000"):
		return int64(binary.BigEndian.Uint64(v)) == us
	case bytes.ContainsRune([]byte(f), '.'):
		return numericIs(t, v, f)
	}
	return false
}
