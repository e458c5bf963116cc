package oltppg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// preparedClient is a clientExec as prepareClient leaves it against a
// server declaring every integer parameter int4, but the district and the
// quantities int2, as PostgreSQL does for smallint columns.
func preparedClient() *clientExec {
	e := &clientExec{}
	for s, st := range clientStatements {
		oids := make([]uint32, len(st.params))
		for i := range len(st.params) {
			k := st.params[i]
			oids[i] = paramKinds[k][0]
			if k == 'i' {
				oids[i] = pgtype.Int4OID
			}
		}
		e.polled.oids[s] = oids
	}
	e.polled.oids[csDelivery][1] = pgtype.Int2OID // o_carrier_id
	return e
}

// Server messages of the answers.
var (
	bound     = &pgproto3.BindComplete{}
	tag       = func(s string) *pgproto3.CommandComplete { return &pgproto3.CommandComplete{CommandTag: []byte(s)} }
	readyIdle = &pgproto3.ReadyForQuery{TxStatus: 'I'}
	readyInTx = &pgproto3.ReadyForQuery{TxStatus: 'T'}
	readyFail = &pgproto3.ReadyForQuery{TxStatus: 'E'}
	deadlock  = &pgproto3.ErrorResponse{Severity: "ERROR", Code: "40P01", Message: "deadlock detected"}
)

func int4Col(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

func row(cols ...[]byte) *pgproto3.DataRow { return &pgproto3.DataRow{Values: cols} }

// firstTrip is a New-Order's first answer: BEGIN, the warehouse, the
// district (order id oID), the customer, and a row for each item found at
// 12.34; customer false leaves the customer's row out.
func firstTrip(t testing.TB, oID int, found []int32, customer bool, end pgproto3.BackendMessage) []byte {
	msgs := []pgproto3.BackendMessage{bound, tag("BEGIN"), bound, row([]byte{1}), tag("SELECT 1"),
		bound, row([]byte{1}, int4Col(oID)), tag("UPDATE 1"), bound}
	if customer {
		msgs = append(msgs, row([]byte{1}, []byte("BAR"), []byte("GC")))
	}
	msgs = append(msgs, tag("SELECT 1"), bound)
	for _, id := range found {
		msgs = append(msgs, row(int4Col(int(id)), []byte("12.34"), []byte("name"), []byte("data")))
	}
	msgs = append(msgs, tag(fmt.Sprintf("SELECT %d", len(found))), end)
	return encode(t, msgs...)
}

// requestKinds is the statements a request binds, by name, and its
// simple queries, in order.
func requestKinds(t *testing.T, req []byte) []string {
	t.Helper()
	var out []string
	for len(req) > 0 {
		typ, size := req[0], int(binary.BigEndian.Uint32(req[1:]))
		body := req[5 : 1+size]
		switch typ {
		case 'B':
			var b pgproto3.Bind
			if err := b.Decode(body); err != nil {
				t.Fatal(err)
			}
			out = append(out, b.PreparedStatement)
		case 'Q':
			out = append(out, string(body[:len(body)-1]))
		}
		req = req[1+size:]
	}
	return out
}

// TestClientAnswerGoesOnAsTheMethodDoes holds the polling driver's client
// mode to clientExec's methods: the New-Order's second round trip with
// the order id read back, the unused item's ROLLBACK, a failure in an
// open transaction rolled back and reported, a row asked for and missing
// reported as pgx's ErrNoRows, and the out values.
func TestClientAnswerGoesOnAsTheMethodDoes(t *testing.T) {
	names := clientStmtNames
	no := func() *oltp.NewOrderInput {
		return &oltp.NewOrderInput{W: 1, D: 3, C: 7, AllLocal: true, ItemIDs: []int32{5, 5, 9}, SupplyW: []int32{1, 1, 1}, Qty: []int32{2, 3, 4}}
	}
	for _, c := range []struct {
		name    string
		t       oltp.TxType
		in      any
		answers [][]byte // one a round trip
		sent    [][]string
		want    error
		check   func(in any) string
	}{
		{name: "new-order", t: oltp.NewOrder, in: no(),
			answers: [][]byte{firstTrip(t, 42, []int32{9, 5}, true, readyInTx),
				encode(t, bound, tag("INSERT 0 1"), bound, tag("INSERT 0 1"), bound, tag("INSERT 0 2"), bound, tag("UPDATE 1"), bound, tag("COMMIT"), readyIdle)},
			sent: [][]string{{names[csBegin], names[csWarehouse], names[csDistrict], names[csCustomer], names[csItems]},
				{names[csOrder], names[csNewOrder], names[csLines], names[csRepeat], names[csCommit]}},
			check: func(in any) string {
				if id := in.(*oltp.NewOrderInput).OID; id != 42 {
					return fmt.Sprintf("order id %d, want 42", id)
				}
				return ""
			}},
		{name: "new-order unused item", t: oltp.NewOrder, in: no(), want: oltp.ErrRolledBack,
			answers: [][]byte{firstTrip(t, 42, []int32{5}, true, readyInTx), encode(t, tag("ROLLBACK"), readyIdle)},
			sent:    [][]string{{names[csBegin], names[csWarehouse], names[csDistrict], names[csCustomer], names[csItems]}, {"ROLLBACK"}}},
		{name: "new-order no customer", t: oltp.NewOrder, in: no(), want: pgx.ErrNoRows,
			answers: [][]byte{firstTrip(t, 42, []int32{5, 9}, false, readyInTx), encode(t, tag("ROLLBACK"), readyIdle)},
			sent:    [][]string{{names[csBegin], names[csWarehouse], names[csDistrict], names[csCustomer], names[csItems]}, {"ROLLBACK"}}},
		{name: "new-order deadlock", t: oltp.NewOrder, in: no(), want: &pgconn.PgError{Code: "40P01"},
			answers: [][]byte{firstTrip(t, 42, []int32{5, 9}, true, readyInTx),
				encode(t, bound, tag("INSERT 0 1"), bound, tag("INSERT 0 1"), bound, deadlock, readyFail), encode(t, tag("ROLLBACK"), readyIdle)},
			sent: [][]string{{names[csBegin], names[csWarehouse], names[csDistrict], names[csCustomer], names[csItems]},
				{names[csOrder], names[csNewOrder], names[csLines], names[csRepeat], names[csCommit]}, {"ROLLBACK"}}},
		{name: "payment by name", t: oltp.Payment, in: &oltp.PaymentInput{W: 1, D: 2, CW: 1, CD: 2, CLast: "BARBAR", AmountCents: 1234},
			answers: [][]byte{encode(t, bound, row(int4Col(1234)), tag("INSERT 0 1"), readyIdle)},
			sent:    [][]string{{names[csPaymentByName]}},
			check: func(in any) string {
				if c := in.(*oltp.PaymentInput).PaidC; c != 1234 {
					return fmt.Sprintf("paid customer %d, want 1234", c)
				}
				return ""
			}},
		{name: "payment no customer", t: oltp.Payment, in: &oltp.PaymentInput{W: 1, D: 2, CW: 1, CD: 2, C: 9, AmountCents: 1}, want: pgx.ErrNoRows,
			answers: [][]byte{encode(t, bound, tag("INSERT 0 0"), readyIdle)}, sent: [][]string{{names[csPaymentByID]}}},
		{name: "order-status no order", t: oltp.OrderStatus, in: &oltp.OrderStatusInput{W: 1, D: 2, C: 3}, want: pgx.ErrNoRows,
			answers: [][]byte{encode(t, bound, tag("SELECT 0"), readyIdle)}, sent: [][]string{{names[csStatusByID]}}},
		{name: "delivery", t: oltp.Delivery, in: &oltp.DeliveryInput{W: 1, Carrier: 3},
			answers: [][]byte{encode(t, bound, row(binary.BigEndian.AppendUint64(nil, 8), binary.BigEndian.AppendUint64(nil, 8)), tag("SELECT 1"), readyIdle)},
			sent:    [][]string{{names[csDelivery]}},
			check: func(in any) string {
				if s := in.(*oltp.DeliveryInput).Skipped; s != tpcc.DistrictsPerWarehouse-8 {
					return fmt.Sprintf("%d districts skipped, want 2", s)
				}
				return ""
			}},
		{name: "stock-level full disk", t: oltp.StockLevel, in: &oltp.StockLevelInput{W: 1, D: 2, Threshold: 15}, want: &pgconn.PgError{Code: "53100"},
			answers: [][]byte{encode(t, bound, &pgproto3.ErrorResponse{Severity: "ERROR", Code: "53100"}, readyIdle)},
			sent:    [][]string{{names[csStockLevel]}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := preparedClient()
			req := e.AppendCall(nil, c.t, c.in)
			var err error
			for i, answer := range c.answers {
				if got := requestKinds(t, req); fmt.Sprint(got) != fmt.Sprint(c.sent[i]) {
					t.Fatalf("round trip %d sent %v, want %v", i+1, got, c.sent[i])
				}
				for cut := range len(answer) {
					if n, _, _ := e.Answer(answer[:cut], c.t, c.in, nil); n != 0 {
						t.Fatalf("round trip %d: an answer cut at %d of %d bytes was taken (%d)", i+1, cut, len(answer), n)
					}
				}
				var n int
				n, req, err = e.Answer(answer, c.t, c.in, nil)
				if n != len(answer) {
					t.Fatalf("round trip %d: took %d of %d bytes", i+1, n, len(answer))
				}
				if more := i < len(c.answers)-1; more != (len(req) > 0) {
					t.Fatalf("round trip %d: next request %q, want one: %v", i+1, req, more)
				}
			}
			var pgErr, wantPg *pgconn.PgError
			switch {
			case errors.As(c.want, &wantPg):
				if !errors.As(err, &pgErr) || pgErr.Code != wantPg.Code {
					t.Errorf("outcome %v, want SQLSTATE %s", err, wantPg.Code)
				}
			case !errors.Is(err, c.want):
				t.Errorf("outcome %v, want %v", err, c.want)
			}
			if c.check != nil {
				if msg := c.check(c.in); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// The parameters go in the binary formats of the types the server
// declared: a smallint as int2, an amount as the numeric of its cents.
func TestBindWriterEncodesTheDeclaredTypes(t *testing.T) {
	m := pgtype.NewMap()
	for _, cents := range []int{0, 1, 99, 100, 1234, 500000, 123456789, -250} {
		var w bindWriter
		w.start("s", []uint32{pgtype.NumericOID, pgtype.Int2OID})
		w.numericCents(cents).int(-3).exec(allBinary)
		var b pgproto3.Bind
		if err := b.Decode(w.buf[5:]); err != nil {
			t.Fatal(err)
		}
		var n pgtype.Numeric
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, b.Parameters[0], &n); err != nil {
			t.Fatalf("%d cents: %v", cents, err)
		}
		if !numericEquals(n, cents) {
			t.Errorf("%d cents encoded as %v×10^%d", cents, n.Int, n.Exp)
		}
		if len(b.Parameters[1]) != 2 || int16(binary.BigEndian.Uint16(b.Parameters[1])) != -3 {
			t.Errorf("an int2 parameter encoded as %x", b.Parameters[1])
		}
	}
}

// numericEquals says whether n is cents/100.
func numericEquals(n pgtype.Numeric, cents int) bool {
	v := n.Int.Int64()
	for e := n.Exp; e < -2; e++ {
		if v%10 != 0 {
			return false
		}
		v /= 10
	}
	for e := n.Exp; e > -2; e-- {
		v *= 10
	}
	return v == int64(cents)
}
