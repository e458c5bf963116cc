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
	var inputs oltp.TxInputs
	cases := []struct {
		name   string
		t      oltp.TxType
		answer string
	}{
		{"new_order", oltp.NewOrder, "new_order"},
		{"new_order_rollback", oltp.NewOrder, "new_order_rollback"},
		{"payment", oltp.Payment, "payment"},
		{"order_status", oltp.OrderStatus, "order_status"},
		{"delivery", oltp.Delivery, "delivery"},
		{"stock_level", oltp.StockLevel, "stock_level"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e := &rawProcExec{procExec: procExec{session: &session{}}}
			answer := fixture(b, c.answer)
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				in := inputs.Draw(term, c.t)
				buf = e.AppendCall(buf[:0], c.t, in)
				if n, _, _ := e.Answer(answer, c.t, in, nil); n != len(answer) {
					b.Fatalf("took %d of %d bytes", n, len(answer))
				}
			}
		})
	}
}
