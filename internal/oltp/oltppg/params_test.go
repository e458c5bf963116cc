package oltppg

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestBinParamsMatchPgx holds the hand-written encoder to pgx's own binary
// encoding of the same values, which the server is known to accept.
func TestBinParamsMatchPgx(t *testing.T) {
	m := pgtype.NewMap()
	cases := []struct {
		name   string
		oid    uint32
		value  any
		encode func(*binParams)
	}{
		{"int4", pgtype.Int4OID, int32(7), func(p *binParams) { p.int4(7) }},
		{"negative int4", pgtype.Int4OID, int32(-3000), func(p *binParams) { p.int4(-3000) }},
		{"text", pgtype.TextOID, "BARBARABLE", func(p *binParams) { p.text("BARBARABLE") }},
		{"empty text", pgtype.TextOID, "", func(p *binParams) { p.text("") }},
		{"int4 array", pgtype.Int4ArrayOID, []int32{1, 99999, 42}, func(p *binParams) { p.int4Array([]int32{1, 99999, 42}) }},
		{"one-element array", pgtype.Int4ArrayOID, []int32{5}, func(p *binParams) { p.int4Array([]int32{5}) }},
	}
	var p binParams
	for _, c := range cases {
		want, err := m.Encode(c.oid, pgtype.BinaryFormatCode, c.value, nil)
		if err != nil {
			t.Fatalf("%s: pgx: %v", c.name, err)
		}
		p.reset()
		p.int4(1) // a value before, so slicing by ends is exercised
		c.encode(&p)
		vals := p.values()
		if len(vals) != 2 {
			t.Fatalf("%s: %d values, want 2", c.name, len(vals))
		}
		if vals[1] == nil || !bytes.Equal(vals[1], want) {
			t.Errorf("%s: encoded % x, pgx encodes % x", c.name, vals[1], want)
		}
	}
}

func TestCheckParamTypes(t *testing.T) {
	if err := checkParamTypes("x", []uint32{pgtype.Int4OID, pgtype.TextOID}, []uint32{pgtype.Int4OID, pgtype.TextOID}); err != nil {
		t.Errorf("matching types refused: %v", err)
	}
	if err := checkParamTypes("x", []uint32{pgtype.Int4OID, pgtype.Int8OID}, []uint32{pgtype.Int4OID, pgtype.Int4OID}); err == nil {
		t.Error("an int8 parameter was accepted for an int4 encoder")
	}
	if err := checkParamTypes("x", []uint32{pgtype.Int4OID}, []uint32{pgtype.Int4OID, pgtype.Int4OID}); err == nil {
		t.Error("a missing parameter was accepted")
	}
}
