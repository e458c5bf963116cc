package oltp

import (
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// fakeRaw is a RawSession whose requests are a fixed 64 bytes and whose
// answer is ReadyForQuery alone: the polling state machine's own work,
// with the real system calls, and no protocol. A transaction takes trips
// round trips (one when 0), as client mode's New-Order takes two.
type fakeRaw struct {
	Session
	fd          int
	trips, trip int
}

var readyForQuery = []byte{'Z', 0, 0, 0, 5, 'I'}

func (f *fakeRaw) FD() (int, error) { return f.fd, nil }
func (f *fakeRaw) AppendCall(buf []byte, _ TxType, _ any) []byte {
	f.trip = 1
	return append(buf, make([]byte, 64)...)
}
func (f *fakeRaw) AppendFlushStats(buf []byte) []byte { return append(buf, make([]byte, 16)...) }
func (f *fakeRaw) Answer(buf []byte, _ TxType, in any, next []byte) (int, []byte, error) {
	if len(buf) < len(readyForQuery) {
		return 0, nil, nil
	}
	if in != nil && f.trip < f.trips {
		f.trip++
		return len(readyForQuery), append(next, make([]byte, 64)...), nil
	}
	return len(readyForQuery), nil, nil
}

// benchPoller is a polling thread of terms on one connection, a socket
// pair whose far end the benchmark answers, inside the window; pooled
// makes the terminals share it.
func benchPoller(b testing.TB, terms []*user, pooled bool) (*poller, int) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	ed := newEdges(false)
	rec := newRecorder(pooled, terms[0].paced(), false)
	pl := newPollers(terms, []lease{{sess: &fakeRaw{fd: fds[0]}, rec: rec}}, pooled, 1, ed)[0]
	pl.conns[0].fd, pl.conns[0].sawStart = fds[0], true
	pl.ph = pollPhase{started: true, begun: true}
	if err := pl.release(&pl.conns[0]); err != nil {
		b.Fatal(err)
	}
	return pl, fds[1]
}

// answer reads the request on the far end of the socket pair, answers it
// and settles the answer.
func (pl *poller) answer(b testing.TB, far int, req []byte) {
	if _, err := syscall.Read(far, req); err != nil {
		b.Fatal(err)
	}
	if _, err := syscall.Write(far, readyForQuery); err != nil {
		b.Fatal(err)
	}
	if err := pl.readable(&pl.conns[0]); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPolledTransaction is one transaction of each type through the
// polling driver's state machines (draw, due, call, send, readable,
// settle, record) on a socket pair whose far end the benchmark answers:
// its CPU and allocations a transaction, the two system calls of each
// side included.
func BenchmarkPolledTransaction(b *testing.B) {
	for t := range TxType(numTxTypes) {
		b.Run(t.String(), func(b *testing.B) {
			pl, far := drawnPoller(b, t, 1)
			req := make([]byte, 4096)
			b.ReportAllocs()
			for b.Loop() {
				pl.answer(b, far, req)
			}
			if got := pl.conns[0].l.rec.win.types[t].count; got == 0 {
				b.Fatalf("no %s recorded", t)
			}
		})
	}
}

// drawnPoller is benchPoller with one user, whose transaction of type t
// and of trips round trips is drawn and its first request sent.
func drawnPoller(b testing.TB, t TxType, trips int) (*poller, int) {
	u := &user{term: *newTerminal(4), deck: &Deck{cards: []uint8{uint8(t)}, rng: tpcc.NewRand(1)}}
	pl, far := benchPoller(b, []*user{u}, false)
	pl.conns[0].rs.(*fakeRaw).trips = trips
	if err := pl.draw(0, time.Now()); err != nil {
		b.Fatal(err)
	}
	return pl, far
}

// BenchmarkPolledRoundTrips is a transaction of two round trips (client
// mode's New-Order) through the state machines: the first answer sends
// the second request at once, the second settles the transaction.
func BenchmarkPolledRoundTrips(b *testing.B) {
	pl, far := drawnPoller(b, NewOrder, 2)
	req := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		pl.answer(b, far, req)
		pl.answer(b, far, req)
	}
	if w := pl.conns[0].l.rec.win.types[NewOrder].count; w < int64(b.N) {
		b.Fatalf("%d New-Orders recorded in %d loops of two round trips", w, b.N)
	}
}

// BenchmarkPolledPaced is a transaction of keying and thinking terminals
// through the state machines and their thread's timers (their times
// scaled to nothing): the answer settled, the think and keying sleeps
// pushed and popped, the call sent; own is a connection each, pooled 64
// terminals on one connection, waiting in its queue.
func BenchmarkPolledPaced(b *testing.B) {
	for _, c := range []struct {
		name   string
		terms  int
		pooled bool
	}{{"own", 1, false}, {"pooled", 64, true}} {
		b.Run(c.name, func(b *testing.B) {
			terms := make([]*user, c.terms)
			for i := range terms {
				terms[i] = &user{term: *newTerminal(4), deck: NewDeck(tpcc.NewRand(1, uint64(i)), ProfileSpec), keying: 1e-9}
			}
			pl, far := benchPoller(b, terms, c.pooled)
			now := time.Now()
			for i := range terms {
				if err := pl.draw(i, now); err != nil {
					b.Fatal(err)
				}
			}
			req := make([]byte, 4096)
			b.ReportAllocs()
			for b.Loop() {
				for pl.conns[0].state != connCall {
					if err := pl.fire(); err != nil {
						b.Fatal(err)
					}
				}
				pl.answer(b, far, req)
			}
			if pl.conns[0].l.rec.win.types[NewOrder].count == 0 {
				b.Fatal("no New-Order recorded")
			}
		})
	}
}
