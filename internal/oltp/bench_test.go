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
	l := lease{rec: newRecorder(false, false, false)}
	var in TxInputs
	b.ReportAllocs()
	for b.Loop() {
		t := u.deck.Next()
		in.Draw(&u.term, t)
		u.record(l, &in, outcome{t: t, lat: 1500 * time.Microsecond, inWindow: true})
	}
}
