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
	txs   []TxLatency     // each latency, only for a Watcher (RunConfig.Watch)
}

// window is a user's record of the timed window, merged once at the end.
type window struct {
	types  [numTxTypes]typeStats
	lat    [numTxTypes]*hist.Histogram
	queue  *hist.Histogram // waits for a pooled connection; nil without a pool
	waitNs int64
	// lag is each transaction's start after its intended start (keying's
	// end, an open loop's schedule): the schedule lag; nil unless paced.
	lag    *hist.Histogram
	lagNs  int64
	inputs inputCounts
	// errClasses counts failed transactions by class (Session.ErrorClass);
	// nil until the first error.
	errClasses map[string]int64
	retries    map[string]int64 // by class, of a Retrier session
}

func newWindow() *window {
	w := &window{}
	for i := range w.lat {
		w.lat[i] = hist.New()
	}
	return w
}

// edges are the signals of the timed window. At start every user flushes
// its statistics and acknowledges (startAck), then holds until begin,
// closed once the counters are read: a user that ran on would publish
// window transactions before the read whenever its server flushed on its
// own. stop closes at the window's end.
type edges struct {
	start, begin, stop chan struct{}
	openStart          sync.Once // start closes once: before the users start, or at the ramp-up's end
	startAck           sync.WaitGroup
	flushStats         bool         // flush the statistics at the edges (Control.StatsFlush)
	stopFlushes        atomic.Int64 // flush calls made at the end edge: they commit too
}

func newEdges(flushStats bool) *edges {
	return &edges{start: make(chan struct{}), begin: make(chan struct{}), stop: make(chan struct{}), flushStats: flushStats}
}

// startWindow closes start: the users flush, acknowledge and hold.
func (ed *edges) startWindow() { ed.openStart.Do(func() { close(ed.start) }) }

// hold waits, after the start edge, for the window to begin or the run
// to end (which the user's loop then sees).
func (ed *edges) hold(ctx context.Context) {
	select {
	case <-ed.begin:
	case <-ed.stop:
	case <-ctx.Done():
	}
}

// recorder holds the outcomes of a user, or of a pooled connection and
// so of whichever users borrowed it: its histograms are most of a user's
// memory (some 160 KB each), so a thousand terminals on 32 connections
// keep 32 sets, not a thousand.
type recorder struct {
	mu      sync.Mutex
	tick    tickStats
	win     *window
	watched bool // keep each latency for a Watcher
}

func newRecorder(pooled, paced, watched bool) *recorder {
	r := &recorder{tick: tickStats{lat: hist.New()}, win: newWindow(), watched: watched}
	if pooled {
		r.win.queue = hist.New()
	}
	if paced {
		r.win.lag = hist.New()
	}
	return r
}

// lease is a pooled connection with the recorder of its transactions.
type lease struct {
	sess Session
	rec  *recorder
	// at names the member of a group the session is on ("node 2 of 3"),
	// and that member's own log; zero for one server.
	at memberAt
}

// connPool lends a few sessions to many users, as a TPC-C transaction
// monitor serves terminals (RunConfig.Connections).
type connPool struct{ free chan lease }

func newConnPool(sessions []Session, recs []*recorder, at func(i int) memberAt) *connPool {
	p := &connPool{free: make(chan lease, len(sessions))}
	for i, s := range sessions {
		p.free <- lease{s, recs[i], at(i)}
	}
	return p
}

// get waits for a free connection, calling seen if the window starts
// meanwhile; false when the run stops first.
func (p *connPool) get(ctx context.Context, stop, start <-chan struct{}, seen func()) (lease, bool) {
	for {
		select {
		case l := <-p.free:
			return l, true
		case <-start:
			seen()
			start = nil
		case <-stop:
			return lease{}, false
		case <-ctx.Done():
			return lease{}, false
		}
	}
}

func (p *connPool) put(l lease) { p.free <- l }

// drain takes every connection, once the transactions on them end; false
// when ctx ends first, with those taken given back.
func (p *connPool) drain(ctx context.Context) ([]lease, bool) {
	all := make([]lease, 0, cap(p.free))
	for len(all) < cap(p.free) {
		select {
		case l := <-p.free:
			all = append(all, l)
		case <-ctx.Done():
			p.refill(all)
			return nil, false
		}
	}
	return all, true
}

func (p *connPool) refill(ls []lease) {
	for _, l := range ls {
		p.free <- l
	}
}

// user is one virtual user: a goroutine with its own terminal, deck and
// histograms, and its own connection or, with a pool, one it borrows for
// each transaction.
type user struct {
	own    lease // the user's connection and recorder; none with a pool
	pool   *connPool
	term   Terminal
	deck   *Deck
	keying float64 // scale of keying and think times; 0 is off
	// interval paces an open loop: one transaction per interval on a fixed
	// schedule, whatever the last one took; 0 is a closed loop.
	interval time.Duration
	next     time.Time // the open loop's next intended start; a keying terminal's first keying's
	edges    *edges

	consecutiveErrs int
	lastErr         error

	in *TxInputs // on a goroutine, made at its first draw
	pt pollTerm  // on the polling driver
}

// paced says the user waits for keying or an open loop's schedule before
// each transaction.
func (u *user) paced() bool { return u.keying > 0 || u.interval > 0 }

// intendedStart is when transaction t, dealt at now, is meant to start:
// now in a closed loop, after its keying time, or at the open loop's next
// scheduled start. A late schedule is not reset: the wait counts in the
// latency (coordinated omission corrected). A keying terminal's first
// keying waits for u.next, its start spread over a mean cycle.
func (u *user) intendedStart(t TxType, now time.Time) time.Time {
	switch {
	case u.interval > 0:
		at := u.next
		u.next = u.next.Add(u.interval)
		return at
	case u.keying > 0:
		if u.next.After(now) {
			now = u.next
		}
		return now.Add(KeyingTime(t, u.keying))
	}
	return now
}

// TxInputs holds one input of each type, refilled at each draw: a user's
// own, or on the polling driver a connection's, whichever terminal it
// serves, so a terminal waiting for its turn carries none.
type TxInputs struct {
	no NewOrderInput
	pm PaymentInput
	os OrderStatusInput
	dl DeliveryInput
	sl StockLevelInput
}

// outcome is one transaction as recorded: lat runs from its intended
// start, wait is the part spent waiting for a pooled connection, lag the
// start's lateness against the intended start.
type outcome struct {
	t              TxType
	lat, wait, lag time.Duration
	err            error
	inWindow       bool
}

// maxConsecutiveErrors stops a user whose every transaction fails: the
// server or schema is broken and further numbers would mean nothing.
const maxConsecutiveErrors = 100

// errTooManyErrors reports a user that gave up.
var errTooManyErrors = errors.New("too many consecutive transaction errors")

// run is the user's loop. It returns when the window ends, the context is
// cancelled, or every transaction keeps failing.
func (u *user) run(ctx context.Context) error {
	w := &waiter{u: u, start: u.edges.start}
	defer func() {
		if !w.sawStart {
			u.edges.startAck.Done()
		}
	}()
	// One timer serves every wait (since Go 1.23 a stopped timer's Reset
	// leaves no stale tick), which a thousand keying terminals would
	// otherwise allocate twice a transaction.
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	w.seen = func() { w.seeStart(ctx) }
	for {
		select {
		case <-w.start:
			w.seeStart(ctx)
		default:
		}
		select {
		case <-u.edges.stop:
			if u.edges.flushStats && u.pool == nil {
				u.flushStats(ctx)
				u.edges.stopFlushes.Add(1)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if err := u.transaction(ctx, w); err != nil {
			return err
		}
	}
}

// transaction deals, waits and runs one transaction, then thinks; nil
// when the run goes on (the window's end is seen by run).
func (u *user) transaction(ctx context.Context, w *waiter) error {
	t := u.deck.Next()
	intended := u.intendedStart(t, time.Now())
	if u.paced() && !w.sleepUntil(ctx, intended) {
		return nil
	}
	ready := time.Now()
	if !u.paced() {
		intended = ready
	}
	// The wait for a pooled connection counts in the latency; a
	// transaction that waited across the window's start runs in it.
	l, ok := u.own, true
	if u.pool != nil {
		l, ok = u.pool.get(ctx, u.edges.stop, w.start, w.seen)
	}
	if !ok {
		return nil
	}
	inWindow := w.sawStart
	began := time.Now()
	if u.in == nil {
		u.in = new(TxInputs)
	}
	err := u.do(ctx, l.sess, t)
	end := time.Now()
	if ctx.Err() != nil {
		u.giveBack(l)
		return ctx.Err() // a transaction cut by the interrupt is not a result
	}
	u.record(l, u.in, outcome{t: t, lat: end.Sub(intended), wait: began.Sub(ready), lag: began.Sub(intended), err: err, inWindow: inWindow})
	u.giveBack(l)
	if err := u.judge(l, err); err != nil {
		return err
	}
	if u.keying > 0 {
		w.sleepUntil(ctx, end.Add(ThinkTime(t, u.keying, unitFloat(u.term.Rng))))
	}
	return nil
}

// judge stops the user on a fault of its connection's server, or when
// its transactions keep failing.
func (u *user) judge(l lease, err error) error {
	if err != nil && !errors.Is(err, ErrRolledBack) {
		if f := l.sess.Fault(err); f != nil {
			return l.at.fault(f)
		}
	}
	if u.consecutiveErrs >= maxConsecutiveErrors {
		return errors.Join(errTooManyErrors, u.lastErr)
	}
	return nil
}

// waiter is a goroutine user's view of the window's start and its timer.
type waiter struct {
	u        *user
	start    <-chan struct{} // nil once seen
	sawStart bool
	timer    *time.Timer
	seen     func() // seeStart, made once
}

// seeStart flushes and acknowledges the window's start, then holds until
// the window begins.
func (w *waiter) seeStart(ctx context.Context) {
	if w.sawStart {
		return
	}
	w.sawStart, w.start = true, nil
	w.u.flushStats(ctx)
	w.u.edges.startAck.Done()
	w.u.edges.hold(ctx)
}

// sleepUntil waits until t, answering the window's start edge on the way;
// false means the run is over.
func (w *waiter) sleepUntil(ctx context.Context, t time.Time) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		w.timer.Reset(d)
		select {
		case <-w.timer.C:
			return true
		case <-w.start:
			w.timer.Stop()
			w.seeStart(ctx)
		case <-w.u.edges.stop:
			w.timer.Stop()
			return false
		case <-ctx.Done():
			w.timer.Stop()
			return false
		}
	}
}

func unitFloat(r *tpcc.Rand) float64 {
	return float64(r.Uint64()>>11+1) / (1 << 53)
}

func (u *user) giveBack(l lease) {
	if u.pool != nil {
		u.pool.put(l)
	}
}

func (u *user) do(ctx context.Context, sess Session, t TxType) error {
	switch in := u.in.Draw(&u.term, t).(type) {
	case *NewOrderInput:
		return sess.NewOrder(ctx, in)
	case *PaymentInput:
		return sess.Payment(ctx, in)
	case *OrderStatusInput:
		return sess.OrderStatus(ctx, in)
	case *DeliveryInput:
		return sess.Delivery(ctx, in)
	default:
		return sess.StockLevel(ctx, in.(*StockLevelInput))
	}
}

// Draw fills the input of transaction t afresh from term and returns it.
func (in *TxInputs) Draw(term *Terminal, t TxType) any {
	switch t {
	case NewOrder:
		term.NextNewOrder(&in.no)
		return &in.no
	case Payment:
		term.NextPayment(&in.pm)
		return &in.pm
	case OrderStatus:
		term.NextOrderStatus(&in.os)
		return &in.os
	case Delivery:
		term.NextDelivery(&in.dl)
		return &in.dl
	default:
		term.NextStockLevel(&in.sl)
		return &in.sl
	}
}

// record files one outcome, whose inputs in holds, under the tick and, if
// the transaction started inside the timed window, under the window.
func (u *user) record(l lease, in *TxInputs, o outcome) {
	t, lat, err := o.t, o.lat, o.err
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
	r := l.rec
	r.mu.Lock()
	r.tick.types[t].add(s)
	if s.count > 0 {
		r.tick.lat.Record(lat)
		if r.watched {
			r.tick.txs = append(r.tick.txs, TxLatency{t, lat})
		}
	}
	r.mu.Unlock()
	if o.inWindow {
		w := r.win
		if s.errors > 0 {
			if w.errClasses == nil {
				w.errClasses = map[string]int64{}
			}
			w.errClasses[l.sess.ErrorClass(err)]++
		}
		if rt, ok := l.sess.(Retrier); ok {
			if class, n := rt.Retried(); n > 0 {
				w.retries = addCount(w.retries, class, int64(n))
			}
		}
		w.types[t].add(s)
		if s.count > 0 {
			w.lat[t].Record(lat)
			w.inputs.count(t, in)
			if w.queue != nil {
				w.queue.Record(o.wait)
				w.waitNs += int64(o.wait)
			}
			if w.lag != nil {
				w.lag.Record(o.lag)
				w.lagNs += int64(o.lag)
			}
		}
	}
}

// takeTick swaps out the recorder's tick stats into into (merging),
// swapping in spare, an empty histogram, and returns the one taken out,
// empty, for the next recorder. The lock is held only for the swap, so a
// user recording a transaction does not wait for the merge.
func (r *recorder) takeTick(into *tickStats, spare *hist.Histogram) *hist.Histogram {
	r.mu.Lock()
	t := r.tick
	// The latencies are copied under the lock: their array stays the
	// recorder's, for the next second.
	into.txs = append(into.txs, t.txs...)
	r.tick = tickStats{lat: spare, txs: t.txs[:0]}
	r.mu.Unlock()
	for i := range t.types {
		into.types[i].add(t.types[i])
	}
	into.lat.Merge(t.lat)
	t.lat.Reset()
	return t.lat
}

// flushStats makes the server publish this user's statistics now, so
// that counters read at a window edge include exactly the transactions on
// the edge's side. Pooled connections are flushed by the run itself, once
// no user holds one (Run).
func (u *user) flushStats(ctx context.Context) {
	if u.edges.flushStats && u.pool == nil {
		_ = u.own.sess.FlushStats(ctx)
	}
}

// addCount adds n under class to m, made when nil.
func addCount(m map[string]int64, class string, n int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	m[class] += n
	return m
}
