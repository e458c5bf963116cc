package oltpmy

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// BenchmarkRawCall is procedures mode's protocol work for each
// transaction on the polling driver: draw the input, write the CALL,
// parse the server's recorded answer and settle its outcome; and the
// New-Order's expected rollback, an ERR packet.
func BenchmarkRawCall(b *testing.B) {
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
		answer string
	}{
		{"new_order", oltp.NewOrder, &no, func() { term.NextNewOrder(&no) }, "new_order"},
		{"new_order_rollback", oltp.NewOrder, &no, func() { term.NextNewOrder(&no) }, "new_order_rollback"},
		{"payment", oltp.Payment, &pm, func() { term.NextPayment(&pm) }, "payment"},
		{"order_status", oltp.OrderStatus, &os, func() { term.NextOrderStatus(&os) }, "order_status"},
		{"delivery", oltp.Delivery, &dl, func() { term.NextDelivery(&dl) }, "delivery"},
		{"stock_level", oltp.StockLevel, &sl, func() { term.NextStockLevel(&sl) }, "stock_level"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := &rawProcExec{procExec: procExec{session: &session{}}}
			answer := fixture(b, c.answer)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				c.draw()
				buf = e.AppendCall(buf[:0], c.t, c.in)
				if n, _, _ := e.Answer(answer, c.t, c.in, nil); n != len(answer) {
					b.Fatalf("took %d of %d bytes", n, len(answer))
				}
			}
		})
	}
}
