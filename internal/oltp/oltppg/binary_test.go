package oltppg

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// The binary numerics decode, by pgx's own decoder, to the text's value,
// and carry the text's decimals as their scale.
func TestBinaryNumeric(t *testing.T) {
	m := pgtype.NewMap()
	for _, text := range []string{"0.00", "50000.00", "-10.00", "10.00", "0.1234", "0.0012", "0.05", "9999.99",
		"300000.00", "12345678.9", "-0.0001", "1.0000", "10000", "123456789012.34"} {
		enc, err := appendNumeric(nil, []byte(text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := binary.BigEndian.Uint32(enc); int(got) != len(enc)-4 {
			t.Fatalf("%s: length word %d, %d bytes follow", text, got, len(enc)-4)
		}
		var n pgtype.Numeric
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, enc[4:], &n); err != nil {
			t.Fatalf("%s: pgx cannot decode it: %v", text, err)
		}
		got := new(big.Rat).SetInt(n.Int)
		exp := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(n.Exp))), nil))
		if n.Exp < 0 {
			got.Quo(got, exp)
		} else {
			got.Mul(got, exp)
		}
		want, _ := new(big.Rat).SetString(text)
		if got.Cmp(want) != 0 {
			t.Errorf("%s decodes to %s", text, got.FloatString(6))
		}
		_, frac, _ := bytes.Cut([]byte(text), []byte{'.'})
		if scale := binary.BigEndian.Uint16(enc[10:]); int(scale) != len(frac) {
			t.Errorf("%s: scale %d, want %d", text, scale, len(frac))
		}
	}
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// Every binary table's generated batch converts: one tuple a line, each
// of the table's columns, the load time as microseconds since 2000.
func TestBinaryBatches(t *testing.T) {
	at := time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)
	g := tpcc.NewGenerator(1, 1, at, tpcc.Constants{CLast: 157, CID: 259, OLIID: 7911})
	for tb, types := range binaryTables {
		if len(types) != len(tb.Columns()) {
			t.Fatalf("%s: %d types for %d columns", tb, len(types), len(tb.Columns()))
		}
		text := g.AppendBatch(nil, tb, 0)
		bin, err := toBinary(nil, text, types)
		if err != nil {
			t.Fatalf("%s: %v", tb, err)
		}
		if !bytes.HasPrefix(bin, binaryHeader) || !bytes.HasSuffix(bin, []byte{0xff, 0xff}) {
			t.Fatalf("%s: no header or trailer", tb)
		}
		rows := 0
		for p := bin[len(binaryHeader) : len(bin)-2]; len(p) > 0; rows++ {
			if n := binary.BigEndian.Uint16(p); int(n) != len(types) {
				t.Fatalf("%s row %d: %d fields", tb, rows, n)
			}
			p = p[2:]
			for k := range types {
				l := int32(binary.BigEndian.Uint32(p))
				p = p[4:]
				if types[k] == colTimestamp && l == 8 {
					if us := int64(binary.BigEndian.Uint64(p)); us != at.Sub(pgEpoch).Microseconds() {
						t.Fatalf("%s row %d: timestamp %d µs", tb, rows, us)
					}
				}
				if l > 0 {
					p = p[l:]
				}
			}
		}
		if want := bytes.Count(text, []byte{'\n'}); rows != want {
			t.Errorf("%s: %d tuples from %d lines", tb, rows, want)
		}
	}
}

// A row short of columns is refused, not sent.
func TestBinaryShortRow(t *testing.T) {
	if _, err := toBinary(nil, []byte("1\t2\n"), binaryTables[tpcc.NewOrder]); err == nil {
		t.Error("a row of 2 columns for new_order's 3 converted")
	}
}
