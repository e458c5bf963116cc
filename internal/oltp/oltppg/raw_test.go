package oltppg

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// encode appends the server's messages as they come on the wire.
func encode(t testing.TB, msgs ...pgproto3.BackendMessage) []byte {
	t.Helper()
	var buf []byte
	for _, m := range msgs {
		var err error
		if buf, err = m.Encode(buf); err != nil {
			t.Fatal(err)
		}
	}
	return buf
}

// TestAnswerReadsWhatTheMethodsReturn holds the polling driver's parser to
// the Session methods' outcomes: a procedure's int4 result, the expected
// rollback, another server error, and an answer still arriving.
func TestAnswerReadsWhatTheMethodsReturn(t *testing.T) {
	var e procExec
	ready := &pgproto3.ReadyForQuery{TxStatus: 'I'}
	row := func(v int32) *pgproto3.DataRow {
		return &pgproto3.DataRow{Values: [][]byte{{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}}}
	}
	done := &pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}

	pm := &oltp.PaymentInput{}
	buf := encode(t, &pgproto3.BindComplete{}, row(1234), done, ready)
	if n, _, err := e.Answer(buf, oltp.Payment, pm, nil); n != len(buf) || err != nil || pm.PaidC != 1234 {
		t.Errorf("payment: took %d of %d bytes, err %v, paid customer %d; want all, nil, 1234", n, len(buf), err, pm.PaidC)
	}

	dl := &oltp.DeliveryInput{}
	buf = encode(t, &pgproto3.BindComplete{}, row(9), done, ready)
	if _, _, err := e.Answer(buf, oltp.Delivery, dl, nil); err != nil || dl.Skipped != tpcc.DistrictsPerWarehouse-9 {
		t.Errorf("delivery of 9 districts: err %v, %d skipped; want 1", err, dl.Skipped)
	}

	rollback := &pgproto3.ErrorResponse{Severity: "ERROR", Code: expectedRollback, Message: "item not found"}
	buf = encode(t, &pgproto3.BindComplete{}, rollback, ready)
	if n, _, err := e.Answer(buf, oltp.NewOrder, &oltp.NewOrderInput{}, nil); n != len(buf) || !errors.Is(err, oltp.ErrRolledBack) {
		t.Errorf("the unused item: took %d of %d bytes, err %v; want oltp.ErrRolledBack", n, len(buf), err)
	}

	full := &pgproto3.ErrorResponse{Severity: "ERROR", Code: "53100", Message: "could not extend file"}
	buf = encode(t, full, ready)
	var pgErr *pgconn.PgError
	if _, _, err := e.Answer(buf, oltp.StockLevel, &oltp.StockLevelInput{}, nil); !errors.As(err, &pgErr) || pgErr.Code != "53100" || serverFault(err, nil) == nil {
		t.Errorf("a full disk: err %v; want its PgError 53100, a fault", err)
	}

	buf = encode(t, &pgproto3.BindComplete{}, row(7), done, ready)
	for cut := range len(buf) {
		if n, _, _ := e.Answer(buf[:cut], oltp.Payment, pm, nil); n != 0 {
			t.Fatalf("an answer cut at %d of %d bytes was taken as whole (%d bytes)", cut, len(buf), n)
		}
	}
	// A flush's answer (a simple query's row description and row) settles
	// nothing.
	buf = encode(t, &pgproto3.RowDescription{}, &pgproto3.DataRow{Values: [][]byte{nil}}, done, ready)
	if n, _, err := e.Answer(buf, oltp.Payment, nil, nil); n != len(buf) || err != nil {
		t.Errorf("a flush's answer: took %d of %d bytes, err %v", n, len(buf), err)
	}
}

// BenchmarkRawNewOrder is the polling driver's own work for a New-Order
// besides the system calls: encode the request, parse the answer.
func BenchmarkRawNewOrder(b *testing.B) {
	var e procExec
	term := &oltp.Terminal{W: 1, Warehouses: 1, Rng: tpcc.NewRand(9)}
	var in oltp.NewOrderInput
	answer, _ := (&pgproto3.BindComplete{}).Encode(nil)
	answer, _ = (&pgproto3.DataRow{Values: [][]byte{{0, 0, 0, 1}}}).Encode(answer)
	answer, _ = (&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}).Encode(answer)
	answer, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(answer)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		term.NextNewOrder(&in)
		buf = e.AppendCall(buf[:0], oltp.NewOrder, &in)
		if n, _, err := e.Answer(answer, oltp.NewOrder, &in, nil); n != len(answer) || err != nil {
			b.Fatal(n, err)
		}
	}
}
