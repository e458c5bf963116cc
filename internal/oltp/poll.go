package oltp

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The polling driver runs every user with a connection of its own as a
// state machine on a locked thread, waiting for all their sockets in one
// epoll_wait and writing and reading them with raw system calls; keying,
// thinking and an open loop's schedule wait on the thread's timers. A
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
	pollSleep                       // keying, thinking or waiting for its schedule, on a timer
	pollDone
)

// pollPhase is where the window stands, as the loop last saw its edges.
type pollPhase struct{ started, begun, stopping bool }

// step is what a user does next, once no edge needs it.
type step int

const (
	stepDraw  step = iota // deal the next card (then keying, or the open loop's schedule)
	stepCall              // send the transaction dealt, once its intended start came
	stepThink             // think after a transaction, then draw
)

// polled is one user of the polling driver.
type polled struct {
	u        *user
	rs       RawSession
	fd       int
	id       int // its index in its poller
	state    pollState
	step     step
	paced    bool // keying and thinking, or an open loop
	t        TxType
	in       any
	intended time.Time // the transaction's intended start: latency runs from it
	wake     time.Time // the end of the sleep (pollSleep)
	sleeps   int       // sleeps begun, to know a timer of an earlier one
	window   bool      // the transaction in flight started inside the window
	sawStart bool
	out      []byte // the request being written
	ans      []byte // answer bytes read, ans[:n] not yet parsed
	n        int
	left     *int // the users not done yet, shared on the thread
	timers   *timerHeap
}

// driverThreads is the polling threads for users: asked, or by default
// one for every usersPerThread users, at most one for each core calibra
// may use; never more than the users.
func driverThreads(asked, users int) int {
	k := asked
	if k <= 0 {
		k = min(runtime.GOMAXPROCS(0), (users+usersPerThread-1)/usersPerThread)
	}
	return max(1, min(k, users))
}

// usersPerThread is the users a polling thread takes by default. A thread
// costs CPU a transaction when the server is slower than the driver (two
// threads batch half the answers an epoll_wait each: 30% more CPU a
// transaction than one against PostgreSQL on the same 2 cores, 8 users),
// and is needed only when one would fill its core: 64 users answered in a
// millisecond are 64,000 transactions a second, about a core at 15 µs
// each.
const usersPerThread = 64

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
// pooled connections.
func rawSessions(users []*user, cfg RunConfig) []RawSession {
	if cfg.pooled() {
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
// statistics between transactions, keying, thinking and an open loop's
// schedule wait on the thread's timers, and every outcome is recorded.
func poll(ctx context.Context, users []*user, rs []RawSession, ed *edges) error {
	pl := &poller{ps: make([]polled, len(users)), left: len(users), ed: ed, start: ed.start, begin: ed.begin, stop: ed.stop}
	defer func() {
		for i := range pl.ps {
			if !pl.ps[i].sawStart {
				ed.startAck.Done()
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := pl.open(ctx, users, rs); err != nil {
		return fmt.Errorf("polling driver: %w", err)
	}
	defer pl.close()
	for i := range pl.ps {
		if err := pl.ps[i].next(ed, pl.ph); err != nil {
			return err
		}
	}
	return pl.loop(ctx)
}

// poller is one polling thread: its users, epoll set and timers.
type poller struct {
	ps                 []polled
	left               int // the users not done yet
	epfd, wake         int // -1 when not open
	stopWaker          func()
	events             []syscall.EpollEvent
	timers             timerHeap
	ed                 *edges
	ph                 pollPhase
	start, begin, stop chan struct{} // each nil once seen
}

// open makes the epoll set of the users' sockets and the edges' eventfd.
func (pl *poller) open(ctx context.Context, users []*user, rs []RawSession) error {
	pl.epfd, pl.wake = -1, -1
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	pl.epfd = epfd
	for i, u := range users {
		fd, err := rs[i].FD()
		if err != nil {
			return err
		}
		p := &pl.ps[i]
		*p = polled{u: u, rs: rs[i], fd: fd, ans: make([]byte, 8192), left: &pl.left, timers: &pl.timers, id: i}
		if u.keying > 0 || u.interval > 0 {
			p.paced = true
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
	}
	// The edges wake the loop through an eventfd, so users held at the
	// start go on at once when the window begins, not at the next timeout.
	pl.wake, pl.stopWaker, err = edgeWaker(ctx, epfd, len(pl.ps), pl.ed)
	pl.events = make([]syscall.EpollEvent, len(pl.ps)+1)
	return err
}

func (pl *poller) close() {
	if pl.stopWaker != nil {
		pl.stopWaker()
	}
	for _, fd := range []int{pl.wake, pl.epfd} {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

// loop waits for answers, timers and edges until every user is done.
func (pl *poller) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := pl.edges(); err != nil {
			return err
		}
		if pl.left == 0 {
			return nil
		}
		r, e := pl.wait()
		if e != 0 {
			if e == syscall.EINTR {
				continue
			}
			return fmt.Errorf("polling driver: epoll_wait: %w", e)
		}
		for _, ev := range pl.events[:r] {
			if err := ctx.Err(); err != nil {
				return err // an answer cut by the interrupt is not a result
			}
			if int(ev.Fd) == len(pl.ps) {
				var b [8]byte
				_, _, _ = syscall.RawSyscall(syscall.SYS_READ, uintptr(pl.wake), uintptr(unsafe.Pointer(&b[0])), 8)
				continue
			}
			if err := pl.ps[ev.Fd].readable(pl.ed, pl.ph); err != nil {
				return err
			}
		}
		if err := pl.fire(); err != nil {
			return err
		}
	}
}

// edges sees the window's edges that came since the last look, and moves
// the users each concerns: those sleeping (keying, thinking, an open
// loop's schedule) flush at the start and stop at the end at once, as a
// goroutine's sleep ends at an edge; those held go on.
func (pl *poller) edges() error {
	moved := false
	select {
	case <-pl.start:
		pl.ph.started, pl.start, moved = true, nil, true
	default:
	}
	select {
	case <-pl.begin:
		pl.ph.begun, pl.begin, moved = true, nil, true
	default:
	}
	select {
	case <-pl.stop:
		pl.ph.stopping, pl.stop, moved = true, nil, true
	default:
	}
	if !moved {
		return nil
	}
	for i := range pl.ps {
		if st := pl.ps[i].state; st == pollHeld || st == pollSleep {
			if err := pl.ps[i].next(pl.ed, pl.ph); err != nil {
				return err
			}
		}
	}
	return nil
}

// wait is epoll_wait until the first timer at the latest, and no longer
// than pollTimeout; it returns the events and the system call's error.
func (pl *poller) wait() (int, syscall.Errno) {
	timeout := time.Duration(pollTimeout) * time.Millisecond
	if len(pl.timers) > 0 {
		timeout = min(timeout, max(0, time.Until(pl.timers[0].wake)))
	}
	if timeout > 0 && timeout < pollTimeout*time.Millisecond && !noPwait2.Load() {
		ts := syscall.NsecToTimespec(int64(timeout))
		r, _, e := syscall.RawSyscall6(sysEpollPwait2, uintptr(pl.epfd), uintptr(unsafe.Pointer(&pl.events[0])), uintptr(len(pl.events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e != syscall.ENOSYS {
			return int(r), e
		}
		noPwait2.Store(true) // before Linux 5.11: milliseconds, rounded up
	}
	ms := (timeout + time.Millisecond - 1) / time.Millisecond
	r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(pl.epfd), uintptr(unsafe.Pointer(&pl.events[0])), uintptr(len(pl.events)), uintptr(ms), 0, 0)
	return int(r), e
}

// sysEpollPwait2 is epoll_pwait2 (Linux 5.11), whose timeout is a
// timespec: an open loop's schedule wants better than milliseconds.
const sysEpollPwait2 = 441

// noPwait2 says epoll_pwait2 answered ENOSYS.
var noPwait2 atomic.Bool

// fire moves the users whose timers are due.
func (pl *poller) fire() error {
	now := time.Now()
	for len(pl.timers) > 0 && !pl.timers[0].wake.After(now) {
		t := pl.timers.pop()
		p := &pl.ps[t.id]
		if p.state != pollSleep || p.sleeps != t.seq {
			continue // a sleep an edge ended
		}
		if err := p.next(pl.ed, pl.ph); err != nil {
			return err
		}
	}
	return nil
}

// edgeWaker returns an eventfd in epfd's set under the mark id that is
// written when the window begins or ends, and what stops the goroutine
// writing it: called before the eventfd is closed, so that no write goes
// to a descriptor its number was given to since.
func edgeWaker(ctx context.Context, epfd, id int, ed *edges) (int, func(), error) {
	efd, _, e := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if e != 0 {
		return -1, nil, fmt.Errorf("eventfd: %w", e)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, int(efd), &ev); err != nil {
		syscall.Close(int(efd))
		return -1, nil, err
	}
	one := [8]byte{1}
	signal := func() { _, _, _ = syscall.RawSyscall(syscall.SYS_WRITE, efd, uintptr(unsafe.Pointer(&one[0])), 8) }
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range []chan struct{}{ed.begin, ed.stop} {
			select {
			case <-c:
				signal()
			case <-ctx.Done():
				return
			case <-quit:
				return
			}
		}
	}()
	return int(efd), func() { close(quit); <-done }, nil
}

// next starts the user's next request: a flush the window's edge asks
// for, or its next step; it holds the user from its start flush until the
// window begins, and is done once the window ended.
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
	return p.advance()
}

// advance takes the user's steps until it sends a transaction or sleeps,
// as a goroutine's loop does: keying before the call (or the open loop's
// schedule), thinking after.
func (p *polled) advance() error {
	u := p.u
	for {
		now := time.Now()
		switch p.step {
		case stepDraw:
			p.t, p.intended, p.step = u.deck.Next(), now, stepCall
			switch {
			case u.interval > 0:
				// A late schedule is not reset: the wait counts in the
				// latency (coordinated omission corrected).
				p.intended = u.next
				u.next = u.next.Add(u.interval)
			case u.keying > 0:
				p.intended = now.Add(KeyingTime(p.t, u.keying))
			}
			continue
		case stepThink:
			if p.wake.After(now) {
				return p.sleep(p.wake)
			}
			p.step = stepDraw
			continue
		}
		if p.intended.After(now) {
			return p.sleep(p.intended)
		}
		if !p.paced {
			p.intended = now
		}
		p.state, p.step = pollCall, stepDraw
		p.in, p.window = u.draw(p.t), p.sawStart
		return p.send(p.rs.AppendCall(p.out[:0], p.t, p.in))
	}
}

// sleep puts the user on the thread's timers until at.
func (p *polled) sleep(at time.Time) error {
	p.state, p.wake = pollSleep, at
	p.sleeps++
	p.timers.push(timer{wake: at, id: p.id, seq: p.sleeps})
	return nil
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
	for p.state == pollCall || p.state == pollStartFlush || p.state == pollStopFlush {
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
	u.record(u.own, p.t, end.Sub(p.intended), 0, err, p.window)
	if u.keying > 0 {
		p.step, p.wake = stepThink, end.Add(ThinkTime(p.t, u.keying, unitFloat(u.term.Rng)))
	}
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

// timer is a user's sleep on its thread's timers: seq tells it from the
// user's later sleeps.
type timer struct {
	wake    time.Time
	id, seq int
}

// timerHeap is a thread's timers, the earliest first: a binary heap on a
// slice, with no interface to box an entry into.
type timerHeap []timer

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].wake.Before(s[up].wake) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *timerHeap) pop() timer {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].wake.Before(s[small].wake) {
			small = l
		}
		if r < len(s) && s[r].wake.Before(s[small].wake) {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}
