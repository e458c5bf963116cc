package oltp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// typeStats accumulates one transaction type's outcomes.
type typeStats struct {
	count, rollbacks, errors int64
	sumNs                    int64
}

func (s *typeStats) add(o typeStats) {
	s.count += o.count
	s.rollbacks += o.rollbacks
	s.errors += o.errors
	s.sumNs += o.sumNs
}

// tickStats is what a user did since the last tick; the collector swaps it
// out every second.
type tickStats struct {
	types [numTxTypes]typeStats
	lat   *hist.Histogram // all types together
}

// window is a user's record of the timed window, merged once at the end.
type window struct {
	types  [numTxTypes]typeStats
	lat    [numTxTypes]*hist.Histogram
	inputs inputCounts
	// errClasses counts failed transactions by class (Session.ErrorClass);
	// nil until the first error.
	errClasses map[string]int64
}

func newWindow() *window {
	w := &window{}
	for i := range w.lat {
		w.lat[i] = hist.New()
	}
	return w
}

// edges are the signals of the timed window: closed at its start and end.
type edges struct {
	start, stop chan struct{}
	startAck    sync.WaitGroup
	flushStats  bool         // flush the statistics at the edges (Control.StatsFlush)
	stopFlushes atomic.Int64 // flush calls made at the end edge: they commit too
}

// user is one virtual user: a goroutine with its own connection, terminal,
// deck and histograms.
type user struct {
	sess   Session
	term   Terminal
	deck   *Deck
	keying float64 // scale of keying and think times; 0 is off
	// interval paces an open loop: one transaction per interval on a fixed
	// schedule, whatever the last one took; 0 is a closed loop.
	interval time.Duration
	next     time.Time // the next transaction's intended start (open loop)
	edges    *edges

	mu   sync.Mutex
	tick tickStats
	win  *window

	consecutiveErrs int
	lastErr         error

	no NewOrderInput
	pm PaymentInput
	os OrderStatusInput
	dl DeliveryInput
	sl StockLevelInput
}

// maxConsecutiveErrors stops a user whose every transaction fails: the
// server or schema is broken and further numbers would mean nothing.
const maxConsecutiveErrors = 100

// errTooManyErrors reports a user that gave up.
var errTooManyErrors = errors.New("too many consecutive transaction errors")

// run is the user's loop. It returns when the window ends, the context is
// cancelled, or every transaction keeps failing.
func (u *user) run(ctx context.Context) error {
	start := u.edges.start
	sawStart := false
	seeStart := func() {
		if !sawStart {
			sawStart = true
			start = nil
			u.flushStats(ctx)
			u.edges.startAck.Done()
		}
	}
	defer func() {
		if !sawStart {
			u.edges.startAck.Done()
		}
	}()
	// sleepUntil waits, answering the window's start edge on the way; false
	// means the run is over.
	sleepUntil := func(t time.Time) bool {
		for {
			d := time.Until(t)
			if d <= 0 {
				return true
			}
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
				return true
			case <-start:
				timer.Stop()
				seeStart()
			case <-u.edges.stop:
				timer.Stop()
				return false
			case <-ctx.Done():
				timer.Stop()
				return false
			}
		}
	}
	for {
		select {
		case <-start:
			seeStart()
		default:
		}
		select {
		case <-u.edges.stop:
			u.flushStats(ctx)
			if u.edges.flushStats {
				u.edges.stopFlushes.Add(1)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		t := u.deck.Next()
		intended := time.Now()
		switch {
		case u.interval > 0:
			// A late schedule is not reset: the wait counts in the latency
			// (coordinated omission corrected).
			intended = u.next
			u.next = u.next.Add(u.interval)
			if !sleepUntil(intended) {
				continue
			}
		case u.keying > 0:
			intended = intended.Add(KeyingTime(t, u.keying))
			if !sleepUntil(intended) {
				continue
			}
		}
		inWindow := sawStart
		began := time.Now()
		if u.keying == 0 && u.interval == 0 {
			intended = began
		}
		err := u.do(ctx, t)
		end := time.Now()
		if ctx.Err() != nil {
			return ctx.Err() // a transaction cut by the interrupt is not a result
		}
		u.record(t, end.Sub(intended), err, inWindow)
		if err != nil && !errors.Is(err, ErrRolledBack) {
			if f := u.sess.Fault(err); f != nil {
				return f
			}
		}
		if u.consecutiveErrs >= maxConsecutiveErrors {
			return errors.Join(errTooManyErrors, u.lastErr)
		}
		if u.keying > 0 {
			sleepUntil(end.Add(ThinkTime(t, u.keying, unitFloat(u.term.Rng))))
		}
	}
}

func unitFloat(r *tpcc.Rand) float64 {
	return float64(r.Uint64()>>11+1) / (1 << 53)
}

func (u *user) do(ctx context.Context, t TxType) error {
	switch t {
	case NewOrder:
		u.term.NextNewOrder(&u.no)
		return u.sess.NewOrder(ctx, &u.no)
	case Payment:
		u.term.NextPayment(&u.pm)
		return u.sess.Payment(ctx, &u.pm)
	case OrderStatus:
		u.term.NextOrderStatus(&u.os)
		return u.sess.OrderStatus(ctx, &u.os)
	case Delivery:
		u.term.NextDelivery(&u.dl)
		return u.sess.Delivery(ctx, &u.dl)
	default:
		u.term.NextStockLevel(&u.sl)
		return u.sess.StockLevel(ctx, &u.sl)
	}
}

// record files one outcome under the tick and, if the transaction started
// inside the timed window, under the window.
func (u *user) record(t TxType, lat time.Duration, err error, inWindow bool) {
	var s typeStats
	switch {
	case err == nil:
		s.count, s.sumNs = 1, int64(lat)
		u.consecutiveErrs = 0
	case errors.Is(err, ErrRolledBack):
		s.count, s.rollbacks, s.sumNs = 1, 1, int64(lat)
		u.consecutiveErrs = 0
	default:
		s.errors = 1
		u.consecutiveErrs++
		u.lastErr = err
	}
	u.mu.Lock()
	u.tick.types[t].add(s)
	if s.count > 0 {
		u.tick.lat.Record(lat)
	}
	u.mu.Unlock()
	if inWindow {
		if s.errors > 0 {
			if u.win.errClasses == nil {
				u.win.errClasses = map[string]int64{}
			}
			u.win.errClasses[u.sess.ErrorClass(err)]++
		}
		u.win.types[t].add(s)
		if s.count > 0 {
			u.win.lat[t].Record(lat)
			u.win.inputs.count(t, u)
		}
	}
}

// takeTick swaps out the user's tick stats into into (merging).
func (u *user) takeTick(into *tickStats) {
	u.mu.Lock()
	for i := range u.tick.types {
		into.types[i].add(u.tick.types[i])
		u.tick.types[i] = typeStats{}
	}
	into.lat.Merge(u.tick.lat)
	u.tick.lat.Reset()
	u.mu.Unlock()
}

// flushStats makes the server publish this user's statistics now, so
// that counters read at a window edge include exactly the transactions on
// the edge's side.
func (u *user) flushStats(ctx context.Context) {
	if u.edges.flushStats {
		_ = u.sess.FlushStats(ctx)
	}
}
