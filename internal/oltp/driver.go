package oltp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	// errClasses counts failed transactions by SQLSTATE ("connection" when
	// the connection broke); nil until the first error.
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
	flushStats  bool         // the server has pg_stat_force_next_flush (15+)
	stopFlushes atomic.Int64 // flush calls made at the end edge: they commit too
}

// user is one virtual user: a goroutine with its own connection, terminal,
// deck and histograms.
type user struct {
	conn   *pgx.Conn
	exec   executor
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
		if f := serverFault(err, u.conn); f != nil {
			return f
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
		return u.exec.newOrder(ctx, &u.no)
	case Payment:
		u.term.NextPayment(&u.pm)
		return u.exec.payment(ctx, &u.pm)
	case OrderStatus:
		u.term.NextOrderStatus(&u.os)
		return u.exec.orderStatus(ctx, &u.os)
	case Delivery:
		u.term.NextDelivery(&u.dl)
		return u.exec.delivery(ctx, &u.dl)
	default:
		u.term.NextStockLevel(&u.sl)
		return u.exec.stockLevel(ctx, &u.sl)
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
	case errors.Is(err, errRollback):
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
			u.win.errClasses[errorClass(err)]++
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

// flushStats makes the server publish this backend's statistics now, so
// that counters read at a window edge include exactly the transactions on
// the edge's side (PostgreSQL otherwise holds them for up to 10 s).
func (u *user) flushStats(ctx context.Context) {
	if u.edges.flushStats {
		_, _ = u.conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	}
}

// errorClass is a failed transaction's SQLSTATE, or "connection" when no
// server error came back.
func errorClass(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return "connection"
}

// serverFault names a failure that no later transaction outlives: the
// storage refused (disk full, I/O error) or the server went away. The run
// stops at the first one and fails with it, in the server's own words,
// instead of counting thousands of failed transactions as a result.
func serverFault(err error, conn *pgx.Conn) error {
	if err == nil || errors.Is(err, errRollback) {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "53100":
			return fmt.Errorf("the disk under the database is full (%s): free space on it or choose a larger --path", pgErr.Message)
		case strings.HasPrefix(pgErr.Code, "58"):
			return fmt.Errorf("the storage under the database failed (%s %s): see logs/server.log", pgErr.Code, pgErr.Message)
		case strings.HasPrefix(pgErr.Code, "57P"):
			return fmt.Errorf("the server stopped (%s): see logs/server.log", pgErr.Message)
		}
		return nil
	}
	if conn != nil && conn.IsClosed() {
		return fmt.Errorf("the connection to the server was lost (%v): the server may have stopped, see logs/server.log", err)
	}
	return nil
}
