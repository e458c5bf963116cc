package oltp

import (
	"slices"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// Terminals sharing a connection on the polling driver take it in the
// order they came due, one transaction at a time, and each waits for it
// in its latency and in the queue's figures.
func TestPooledTerminalsTakeTheConnectionInTurn(t *testing.T) {
	terms := make([]*user, 3)
	for i := range terms {
		terms[i] = &user{term: *newTerminal(4), deck: NewDeck(tpcc.NewRand(1, uint64(i)), ProfileSpec)}
	}
	pl, far := benchPoller(t, terms, true)
	now := time.Now()
	for i := range terms {
		if err := pl.draw(i, now); err != nil {
			t.Fatal(err)
		}
	}
	c := &pl.conns[0]
	req := make([]byte, 4096)
	var order []int
	for range 6 {
		if c.state != connCall {
			t.Fatalf("the connection is %d with terminals due, want a call in flight", c.state)
		}
		order = append(order, c.term)
		time.Sleep(time.Millisecond)
		pl.answer(t, far, req)
	}
	if want := []int{0, 1, 2, 0, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("the connection served terminals %v, want %v", order, want)
	}
	w := c.l.rec.win
	var n int64
	for _, s := range w.types {
		n += s.count
	}
	if n != 6 || w.queue.Count() != 6 || w.waitNs < int64(2*time.Millisecond) {
		t.Errorf("%d transactions, %d waits summing %v: want 6, each having waited for the others", n, w.queue.Count(), time.Duration(w.waitNs))
	}
}
