package oltp

import (
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// BenchmarkTransactionLoop is the driver's own work per transaction, without
// the database: deal a card, draw the inputs, record the outcome.
func BenchmarkTransactionLoop(b *testing.B) {
	u := &user{term: *newTerminal(4), deck: NewDeck(tpcc.NewRand(1, 2), ProfileSpec), edges: &edges{}}
	l := lease{rec: newRecorder(false)}
	b.ReportAllocs()
	for b.Loop() {
		t := u.deck.Next()
		switch t {
		case NewOrder:
			u.term.NextNewOrder(&u.no)
		case Payment:
			u.term.NextPayment(&u.pm)
		case OrderStatus:
			u.term.NextOrderStatus(&u.os)
		case Delivery:
			u.term.NextDelivery(&u.dl)
		default:
			u.term.NextStockLevel(&u.sl)
		}
		u.record(l, t, 1500*time.Microsecond, 0, nil, true)
	}
}
