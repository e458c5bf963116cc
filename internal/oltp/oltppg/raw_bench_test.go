package oltppg

import (
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
	var (
		no oltp.NewOrderInput
		pm oltp.PaymentInput
		os oltp.OrderStatusInput
		dl oltp.DeliveryInput
		sl oltp.StockLevelInput
	)
	cases := []struct {
		name   string
		t      oltp.TxType
		in     any
		draw   func()
		answer []byte
	}{
		{"new_order", oltp.NewOrder, &no, func() { term.NextNewOrder(&no) }, ok},
		{"new_order_rollback", oltp.NewOrder, &no, func() { term.NextNewOrder(&no) }, rollback},
		{"payment", oltp.Payment, &pm, func() { term.NextPayment(&pm) }, ok},
		{"order_status", oltp.OrderStatus, &os, func() { term.NextOrderStatus(&os) }, ok},
		{"delivery", oltp.Delivery, &dl, func() { term.NextDelivery(&dl) }, ok},
		{"stock_level", oltp.StockLevel, &sl, func() { term.NextStockLevel(&sl) }, ok},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var e procExec
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				c.draw()
				buf = e.AppendCall(buf[:0], c.t, c.in)
				if n, _, _ := e.Answer(c.answer, c.t, c.in, nil); n != len(c.answer) {
					b.Fatalf("took %d of %d bytes", n, len(c.answer))
				}
			}
		})
	}
}
