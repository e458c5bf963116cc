package oltp

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/results"
)

// busySession takes a while over every transaction and counts how many of
// its kind run at once.
type busySession struct {
	inUse, maxInUse *atomic.Int64
}

func (s busySession) work() error {
	n := s.inUse.Add(1)
	for {
		m := s.maxInUse.Load()
		if n <= m || s.maxInUse.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond)
	s.inUse.Add(-1)
	return nil
}

func (s busySession) NewOrder(context.Context, *NewOrderInput) error       { return s.work() }
func (s busySession) Payment(context.Context, *PaymentInput) error         { return s.work() }
func (s busySession) OrderStatus(context.Context, *OrderStatusInput) error { return s.work() }
func (s busySession) Delivery(context.Context, *DeliveryInput) error       { return s.work() }
func (s busySession) StockLevel(context.Context, *StockLevelInput) error   { return s.work() }
func (busySession) FlushStats(context.Context) error                       { return nil }
func (busySession) ErrorClass(error) string                                { return "x" }
func (busySession) Fault(error) error                                      { return nil }
func (busySession) Closed() bool                                           { return false }
func (busySession) Close()                                                 {}

// Users sharing fewer connections never run more transactions at once
// than there are connections, and each transaction's latency holds the
// wait for one, which is reported on its own.
func TestTerminalsShareTheirConnections(t *testing.T) {
	var inUse, maxInUse atomic.Int64
	const users, conns = 6, 2
	recs := []*recorder{newRecorder(true, false, false), newRecorder(true, false, false)}
	pool := newConnPool([]Session{busySession{&inUse, &maxInUse}, busySession{&inUse, &maxInUse}}, recs, func(int) memberAt { return memberAt{} })
	ed := newEdges(false)
	ed.startWindow()
	close(ed.begin)
	ed.startAck.Add(users)
	us := make([]*user, users)
	var wg sync.WaitGroup
	for i := range us {
		us[i] = &user{pool: pool, term: *newTerminal(4), deck: NewDeck(tpcc.NewRand(1, uint64(i)), ProfileSpec), edges: ed}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := us[i].run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(ed.stop)
	wg.Wait()
	if m := maxInUse.Load(); m > conns {
		t.Errorf("%d transactions ran at once on %d connections", m, conns)
	}
	out := &results.OLTP{Missing: map[string]string{}}
	summarise(out, recs, users, 300*time.Millisecond, RunConfig{Users: users, Connections: conns, Warehouses: 4})
	if out.QueueMs == nil || out.QueueMs.Mean <= 0 {
		t.Fatalf("queue %+v: six users on two connections must wait", out.QueueMs)
	}
	if out.ARTMs < out.QueueMs.Mean {
		t.Errorf("mean latency %.3f ms is below the mean wait %.3f ms it holds", out.ARTMs, out.QueueMs.Mean)
	}
}
