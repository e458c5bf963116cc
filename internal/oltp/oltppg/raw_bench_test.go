package oltppg

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// BenchmarkRawCall is procedures mode's protocol work for each
// transaction on the polling driver: draw the input, encode the Bind,
// Execute and Sync, parse the answer and settle its outcome; and the
// New-Order's expected rollback, an ErrorResponse.
func BenchmarkRawCall(b *testing.B) {
	ok, _ := (&pgproto3.BindComplete{}).Encode(nil)
	ok, _ = (&pgproto3.DataRow{Values: [][]byte{{0, 0, 0, 10}}}).Encode(ok)
	ok, _ = (&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}).Encode(ok)
	ok, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(ok)
	rollback, _ := (&pgproto3.BindComplete{}).Encode(nil)
	rollback, _ = (&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: expectedRollback,
		Message: "tpcc: item number is not valid", File: "pl_exec.c", Line: 3911, Routine: "exec_stmt_raise"}).Encode(rollback)
	rollback, _ = (&pgproto3.ReadyForQuery{TxStatus: 'I'}).Encode(rollback)
	term := &oltp.Terminal{W: 1, Warehouses: 4, Rng: tpcc.NewRand(9)}
	var inputs oltp.TxInputs
	cases := []struct {
		name   string
		t      oltp.TxType
		answer []byte
	}{
		{"new_order", oltp.NewOrder, ok},
		{"new_order_rollback", oltp.NewOrder, rollback},
		{"payment", oltp.Payment, ok},
		{"order_status", oltp.OrderStatus, ok},
		{"delivery", oltp.Delivery, ok},
		{"stock_level", oltp.StockLevel, ok},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var e procExec
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				in := inputs.Draw(term, c.t)
				buf = e.AppendCall(buf[:0], c.t, in)
				if n, _, _ := e.Answer(c.answer, c.t, in, nil); n != len(c.answer) {
					b.Fatalf("took %d of %d bytes", n, len(c.answer))
				}
			}
		})
	}
}

// BenchmarkRawClient is client mode's protocol work for each transaction
// on the polling driver: encode each round trip's Binds, Executes and
// Sync, parse each answer and go on or settle; the New-Order with its
// second round trip, and with the unused item's ROLLBACK.
func BenchmarkRawClient(b *testing.B) {
	items := []int32{3, 5, 5, 8, 13, 21, 34, 55, 89, 144}
	no := &oltp.NewOrderInput{W: 1, D: 3, C: 7, AllLocal: true, ItemIDs: items,
		SupplyW: []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, Qty: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	distinct := []int32{3, 5, 8, 13, 21, 34, 55, 89, 144}
	committed := encode(b, bound, tag("INSERT 0 1"), bound, tag("INSERT 0 1"), bound, tag("INSERT 0 9"), bound, tag("UPDATE 1"), bound, tag("COMMIT"), readyIdle)
	rolledBack := encode(b, tag("ROLLBACK"), readyIdle)
	one := encode(b, bound, row(int4Col(1)), tag("SELECT 1"), readyIdle)
	int8s := encode(b, bound, row(binary.BigEndian.AppendUint64(nil, 10), binary.BigEndian.AppendUint64(nil, 10)), tag("SELECT 1"), readyIdle)
	term := &oltp.Terminal{W: 1, Warehouses: 4, Rng: tpcc.NewRand(9)}
	var inputs oltp.TxInputs
	// New-Order's input is fixed: its recorded answers name its items.
	cases := []struct {
		name    string
		t       oltp.TxType
		fixed   any // nil: drawn afresh each time
		answers [][]byte
	}{
		{"new_order", oltp.NewOrder, no, [][]byte{firstTrip(b, 42, distinct, true, readyInTx), committed}},
		{"new_order_rollback", oltp.NewOrder, no, [][]byte{firstTrip(b, 42, distinct[1:], true, readyInTx), rolledBack}},
		{"payment", oltp.Payment, nil, [][]byte{one}},
		{"order_status", oltp.OrderStatus, nil, [][]byte{one}},
		{"delivery", oltp.Delivery, nil, [][]byte{int8s}},
		{"stock_level", oltp.StockLevel, nil, [][]byte{int8s}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := preparedClient()
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				in := c.fixed
				if in == nil {
					in = inputs.Draw(term, c.t)
				}
				buf = e.AppendCall(buf[:0], c.t, in)
				for _, answer := range c.answers {
					n, req, err := e.Answer(answer, c.t, in, buf[:0])
					if n != len(answer) || err != nil && !errors.Is(err, oltp.ErrRolledBack) {
						b.Fatalf("took %d of %d bytes: %v", n, len(answer), err)
					}
					if len(req) > 0 {
						buf = req // the next round trip's, as the connection keeps it
					}
				}
			}
		})
	}
}
