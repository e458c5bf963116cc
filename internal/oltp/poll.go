package oltp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// The polling driver runs every user of a closed loop without keying as a
// state machine on one locked thread, waiting for all their sockets in one
// epoll_wait and writing and reading them with raw system calls. A
// goroutine a user costs the Go scheduler about 20 µs of CPU a round trip
// here (the network poller's park and wake, a futex, the monitor thread
// woken at each system call), as much as the kernel's own share; the
// polling loop pays only the kernel's (README, driver performance). Raw
// system calls keep the thread's P while they block; the garbage collector
// still stops the loop, as its signal ends epoll_wait early.

// Sharding: the users are split over several such threads
// (RunConfig.DriverThreads), each with its own epoll set, eventfd and
// users, sharing nothing on the hot path: the window's edges are the only
// shared state they touch (channels read without blocking, atomic counts).

// The driver models results.DriverCPU.Model names.
const (
	DriverPolling    = "polling"
	DriverGoroutines = "goroutines"
)

// pollTimeout bounds a wait, so the window's edges and an interrupt are
// seen within it when no answer comes.
const pollTimeout = 10 // ms

type pollState int

const (
	pollCall       pollState = iota // a transaction in flight
	pollStartFlush                  // the flush at the window's start
	pollStopFlush                   // the flush at its end
	pollHeld                        // flushed at the start, waiting for the window to begin
	pollDone
)

// pollPhase is where the window stands, as the loop last saw its edges.
type pollPhase struct{ started, begun, stopping bool }

// polled is one user of the polling driver.
type polled struct {
	u        *user
	rs       RawSession
	fd       int
	state    pollState
	t        TxType
	in       any
	began    time.Time
	window   bool // the transaction in flight started inside the window
	sawStart bool
	out      []byte // the request being written
	ans      []byte // answer bytes read, ans[:n] not yet parsed
	n        int
	left     *int // the users not done yet, shared
}

// driverThreads is the polling threads for users: asked, or one for
// each core calibra may use; never more than the users.
func driverThreads(asked, users int) int {
	k := asked
	if k <= 0 {
		k = runtime.GOMAXPROCS(0)
	}
	return max(1, min(k, users))
}

// span is a range of users, [lo, hi).
type span struct{ lo, hi int }

// shardUsers splits n users into k contiguous spans whose sizes differ by
// at most one.
func shardUsers(n, k int) []span {
	out := make([]span, 0, k)
	lo := 0
	for i := range k {
		hi := lo + n/k
		if i < n%k {
			hi++
		}
		out = append(out, span{lo, hi})
		lo = hi
	}
	return out
}

// rawSessions are the users' sessions as RawSessions, or nil when one of
// them is not or the run is one the polling driver does not drive:
// pooled connections, keying and thinking, or an open loop.
func rawSessions(users []*user, cfg RunConfig) []RawSession {
	if cfg.pooled() || cfg.KeyingThinking > 0 || cfg.RatePerUser > 0 {
		return nil
	}
	rs := make([]RawSession, len(users))
	for i, u := range users {
		r, ok := u.own.sess.(RawSession)
		if !ok {
			return nil
		}
		rs[i] = r
	}
	return rs
}

// poll drives users on their raw sessions until the window's end or ctx
// ends, as each user's run would: the window's edges flush the server's
// statistics between transactions, and every outcome is recorded.
func poll(ctx context.Context, users []*user, rs []RawSession, ed *edges) (err error) {
	ps := make([]polled, len(users))
	left := len(ps)
	defer func() {
		for i := range ps {
			if !ps[i].sawStart {
				ed.startAck.Done()
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("polling driver: %w", err)
	}
	defer syscall.Close(epfd)
	for i, u := range users {
		fd, err := rs[i].FD()
		if err != nil {
			return fmt.Errorf("polling driver: %w", err)
		}
		ps[i] = polled{u: u, rs: rs[i], fd: fd, ans: make([]byte, 8192), left: &left}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return fmt.Errorf("polling driver: %w", err)
		}
	}
	// The edges wake the loop through an eventfd, so users held at the
	// start go on at once when the window begins, not at the next timeout.
	wake, err := edgeWaker(ctx, epfd, len(ps), ed)
	if err != nil {
		return fmt.Errorf("polling driver: %w", err)
	}
	defer syscall.Close(wake)
	start, begin, stop := ed.start, ed.begin, ed.stop
	var ph pollPhase
	for i := range ps {
		if err := ps[i].next(ed, ph); err != nil {
			return err
		}
	}
	events := make([]syscall.EpollEvent, len(ps)+1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		resume := false
		select {
		case <-start:
			ph.started, start = true, nil
		default:
		}
		select {
		case <-begin:
			ph.begun, begin, resume = true, nil, true
		default:
		}
		select {
		case <-stop:
			ph.stopping, stop, resume = true, nil, true
		default:
		}
		for i := range ps {
			if resume && ps[i].state == pollHeld {
				if err := ps[i].next(ed, ph); err != nil {
					return err
				}
			}
		}
		if left == 0 {
			return nil
		}
		r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), pollTimeout, 0, 0)
		if e != 0 {
			if e == syscall.EINTR {
				continue
			}
			return fmt.Errorf("polling driver: epoll_wait: %w", e)
		}
		for _, ev := range events[:r] {
			if err := ctx.Err(); err != nil {
				return err // an answer cut by the interrupt is not a result
			}
			if int(ev.Fd) == len(ps) {
				var b [8]byte
				_, _, _ = syscall.RawSyscall(syscall.SYS_READ, uintptr(wake), uintptr(unsafe.Pointer(&b[0])), 8)
				continue
			}
			if err := ps[ev.Fd].readable(ed, ph); err != nil {
				return err
			}
		}
	}
}

// edgeWaker returns an eventfd in epfd's set under the mark id that is
// written when the window begins or ends (or ctx ends).
func edgeWaker(ctx context.Context, epfd, id int, ed *edges) (int, error) {
	efd, _, e := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if e != 0 {
		return 0, fmt.Errorf("eventfd: %w", e)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, int(efd), &ev); err != nil {
		syscall.Close(int(efd))
		return 0, err
	}
	one := [8]byte{1}
	signal := func() { _, _, _ = syscall.RawSyscall(syscall.SYS_WRITE, efd, uintptr(unsafe.Pointer(&one[0])), 8) }
	go func() {
		for _, c := range []chan struct{}{ed.begin, ed.stop} {
			select {
			case <-c:
				signal()
			case <-ctx.Done():
				return
			}
		}
	}()
	return int(efd), nil
}

// next starts the user's next request: a flush the window's edge asks
// for, or its next transaction; it holds the user from its start flush
// until the window begins, and is done once the window ended.
func (p *polled) next(ed *edges, ph pollPhase) error {
	switch {
	case ph.stopping && p.state == pollStopFlush, ph.stopping && !ed.flushStats:
		p.state = pollDone
		*p.left--
		return nil
	case ph.stopping:
		p.state = pollStopFlush
		ed.stopFlushes.Add(1)
		return p.send(p.rs.AppendFlushStats(p.out[:0]))
	case ph.started && !p.sawStart && ed.flushStats && p.state != pollStartFlush:
		p.state = pollStartFlush
		return p.send(p.rs.AppendFlushStats(p.out[:0]))
	case ph.started && !p.sawStart:
		p.sawStart = true
		ed.startAck.Done()
		fallthrough
	case p.sawStart && !ph.begun:
		p.state = pollHeld
		return nil
	}
	p.state, p.t = pollCall, p.u.deck.Next()
	p.in, p.window = p.u.draw(p.t), p.sawStart
	p.began = time.Now()
	return p.send(p.rs.AppendCall(p.out[:0], p.t, p.in))
}

// send writes a whole request; a few hundred bytes fit the socket's
// buffer, which holds no earlier request, so a short write means the
// connection broke.
func (p *polled) send(req []byte) error {
	p.out = req
	for len(req) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(p.fd), uintptr(unsafe.Pointer(&req[0])), uintptr(len(req)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return p.lost(e)
		}
		req = req[n:]
	}
	return nil
}

// readable reads what the socket holds and settles every whole answer.
func (p *polled) readable(ed *edges, ph pollPhase) error {
	if p.n == len(p.ans) {
		p.ans = append(p.ans, make([]byte, len(p.ans))...)
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(p.fd), uintptr(unsafe.Pointer(&p.ans[p.n])), uintptr(len(p.ans)-p.n))
	switch {
	case e == syscall.EAGAIN || e == syscall.EINTR:
		return nil
	case e != 0:
		return p.lost(e)
	case n == 0:
		return p.lost(errors.New("end of stream"))
	}
	p.n += int(n)
	for p.state != pollDone && p.state != pollHeld {
		in := p.in
		if p.state != pollCall {
			in = nil // a flush's answer
		}
		used, err := p.rs.Answer(p.ans[:p.n], p.t, in)
		if used == 0 {
			return nil
		}
		p.n = copy(p.ans, p.ans[used:p.n])
		if err := p.settle(ed, err); err != nil {
			return err
		}
		if err := p.next(ed, ph); err != nil {
			return err
		}
	}
	return nil
}

// settle files the answer of the request in flight.
func (p *polled) settle(ed *edges, err error) error {
	switch p.state {
	case pollStartFlush:
		p.sawStart = true
		ed.startAck.Done()
		return nil
	case pollStopFlush:
		return nil
	}
	u := p.u
	end := time.Now()
	u.record(u.own, p.t, end.Sub(p.began), 0, err, p.window)
	if err != nil && !errors.Is(err, ErrRolledBack) {
		if f := u.own.sess.Fault(err); f != nil {
			return u.own.at.fault(f)
		}
	}
	if u.consecutiveErrs >= maxConsecutiveErrors {
		return errors.Join(errTooManyErrors, u.lastErr)
	}
	return nil
}

func (p *polled) lost(err error) error {
	return fmt.Errorf("the connection to the server was lost (%v): the server may have stopped, see logs/server.log", err)
}
