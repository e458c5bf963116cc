package oltp

import (
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// fakeRaw is a RawSession whose requests are a fixed 64 bytes and whose
// answer is ReadyForQuery alone: the polling state machine's own work,
// with the real system calls, and no protocol.
type fakeRaw struct {
	Session
	fd int
}

var readyForQuery = []byte{'Z', 0, 0, 0, 5, 'I'}

func (f *fakeRaw) FD() (int, error) { return f.fd, nil }
func (f *fakeRaw) AppendCall(buf []byte, _ TxType, _ any) []byte {
	return append(buf, make([]byte, 64)...)
}
func (f *fakeRaw) AppendFlushStats(buf []byte) []byte { return append(buf, make([]byte, 16)...) }
func (f *fakeRaw) Answer(buf []byte, _ TxType, _ any) (int, error) {
	if len(buf) < len(readyForQuery) {
		return 0, nil
	}
	return len(readyForQuery), nil
}

// BenchmarkPolledTransaction is one transaction of each type through the
// polling driver's state machine (next, send, readable, settle, record)
// on a socket pair whose far end the benchmark answers: its CPU and
// allocations a transaction, the two system calls of each side included.
func BenchmarkPolledTransaction(b *testing.B) {
	for t := range TxType(numTxTypes) {
		b.Run(t.String(), func(b *testing.B) {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer syscall.Close(fds[0])
			defer syscall.Close(fds[1])
			ed := newEdges(false)
			u := &user{term: *newTerminal(4), deck: &Deck{cards: []TxType{t}, rng: tpcc.NewRand(1)}, edges: ed,
				own: lease{rec: newRecorder(false)}}
			left := 1
			p := &polled{u: u, rs: &fakeRaw{fd: fds[0]}, fd: fds[0], ans: make([]byte, 8192), left: &left, sawStart: true}
			ph := pollPhase{started: true, begun: true}
			req := make([]byte, 4096)
			if err := p.next(ed, ph); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := syscall.Read(fds[1], req); err != nil {
					b.Fatal(err)
				}
				if _, err := syscall.Write(fds[1], readyForQuery); err != nil {
					b.Fatal(err)
				}
				if err := p.readable(ed, ph); err != nil {
					b.Fatal(err)
				}
			}
			if got := u.own.rec.win.types[t].count; got == 0 {
				b.Fatalf("no %s recorded", t)
			}
		})
	}
}

// BenchmarkPolledPaced is a transaction of a keying and thinking user
// through the state machine and its thread's timers: the answer settled,
// the think and keying sleeps pushed and popped (their times scaled to
// nothing), the call sent.
func BenchmarkPolledPaced(b *testing.B) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	ed := newEdges(false)
	u := &user{term: *newTerminal(4), deck: NewDeck(tpcc.NewRand(1), ProfileSpec), edges: ed, keying: 1e-9,
		own: lease{rec: newRecorder(false)}}
	left := 1
	pl := &poller{ps: []polled{{u: u, rs: &fakeRaw{fd: fds[0]}, fd: fds[0], ans: make([]byte, 8192), left: &left, sawStart: true, paced: true}}, ed: ed}
	pl.ps[0].timers = &pl.timers
	pl.ph = pollPhase{started: true, begun: true}
	p := &pl.ps[0]
	req := make([]byte, 4096)
	if err := p.next(ed, pl.ph); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for p.state == pollSleep {
			if err := pl.fire(); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := syscall.Read(fds[1], req); err != nil {
			b.Fatal(err)
		}
		if _, err := syscall.Write(fds[1], readyForQuery); err != nil {
			b.Fatal(err)
		}
		if err := p.readable(ed, pl.ph); err != nil {
			b.Fatal(err)
		}
	}
	if u.own.rec.win.types[NewOrder].count == 0 {
		b.Fatal("no New-Order recorded")
	}
}
