package oltp

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/calibra-bench/calibra/internal/proc"
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

// pollPhase is where the window stands, as the loop last saw its edges.
type pollPhase struct{ started, begun, stopping bool }

// driverThreads is the polling threads for conns connections: asked, or
// by default one for every connsPerThread, at most one for each core
// calibra may use; never more than the connections.
func driverThreads(asked, conns int) int {
	k := asked
	if k <= 0 {
		k = min(runtime.GOMAXPROCS(0), (conns+connsPerThread-1)/connsPerThread)
	}
	return max(1, min(k, conns))
}

// connsPerThread is the connections a polling thread takes by default. A
// thread costs CPU a transaction when the server is slower than the driver
// (two threads batch half the answers an epoll_wait each: 30% more CPU a
// transaction than one against PostgreSQL on the same 2 cores, 8 users),
// and is needed only when one would fill its core: 64 connections
// answered in a millisecond are 64,000 transactions a second, about a core
// at 15 µs each.
const connsPerThread = 64

// span is a range of users or connections, [lo, hi).
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

// poller is one polling thread: its terminals, connections, epoll set and
// timers.
type poller struct {
	terms              []*user
	conns              []pconn
	pooled             bool
	queue              ring    // due terminals waiting for a connection (pooled)
	free               []int32 // connections with nothing to do (pooled)
	left               int     // the connections not done yet
	epfd, wake         int     // -1 when not open
	stopWaker          func()
	events             []syscall.EpollEvent
	timers             timerHeap
	base               time.Time // the timers' zero
	ed                 *edges
	ph                 pollPhase
	start, begin, stop chan struct{} // each nil once seen
	// cpuBegun and cpuStopped are the thread's own CPU when it saw the
	// window begin and stop: the load generator's share of the process's.
	cpuBegun, cpuStopped time.Duration
	// wakes counts the returns from epoll_wait; wakesBegun and
	// wakesStopped are its value at the same sights of the window.
	wakes, wakesBegun, wakesStopped uint64
}

// newPollers splits the users and their connections (their own, or the
// pool's when pooled) over the polling threads, whose memory they take
// now, before the users start; nil when a session is not a RawSession.
func newPollers(users []*user, conns []lease, pooled bool, asked int, ed *edges) []*poller {
	rs := make([]RawSession, len(conns))
	for i, l := range conns {
		r, ok := l.sess.(RawSession)
		if !ok {
			return nil
		}
		rs[i] = r
	}
	k := driverThreads(asked, len(conns))
	cs, ts := shardUsers(len(conns), k), shardUsers(len(users), k)
	pls := make([]*poller, k)
	for j := range pls {
		c, t := cs[j], ts[j]
		pl := &poller{terms: users[t.lo:t.hi], conns: make([]pconn, c.hi-c.lo), left: c.hi - c.lo, pooled: pooled, ed: ed,
			start: ed.start, begin: ed.begin, stop: ed.stop, epfd: -1, wake: -1}
		for i := range pl.conns {
			pl.conns[i] = pconn{l: conns[c.lo+i], rs: rs[c.lo+i], id: i, ans: make([]byte, 8192)}
		}
		pl.timers, pl.base = make(timerHeap, 0, len(pl.terms)), time.Now()
		if pooled {
			pl.queue = ring{ids: make([]int32, len(pl.terms))}
			pl.free = make([]int32, 0, len(pl.conns))
		}
		pl.events = make([]syscall.EpollEvent, len(pl.conns)+1)
		pls[j] = pl
	}
	return pls
}

// run drives the poller's terminals on its connections until the window's
// end or ctx ends, as each user's run would: the window's edges flush the
// server's statistics between transactions, keying, thinking and an open
// loop's schedule wait on the thread's timers, and every outcome is
// recorded.
func (pl *poller) run(ctx context.Context) error {
	defer func() {
		for i := range pl.conns {
			if !pl.conns[i].sawStart {
				pl.ed.startAck.Done()
			}
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := pl.open(ctx); err != nil {
		return fmt.Errorf("polling driver: %w", err)
	}
	defer pl.close()
	// A window that starts at once (no ramp-up) holds every connection
	// before its first transaction: the releases below flush and hold.
	select {
	case <-pl.start:
		pl.ph.started, pl.start = true, nil
	default:
	}
	for i := range pl.conns {
		if err := pl.release(&pl.conns[i]); err != nil {
			return err
		}
	}
	now := time.Now()
	for i := range pl.terms {
		if err := pl.draw(i, now); err != nil {
			return err
		}
	}
	return pl.loop(ctx)
}

// open makes the epoll set of the connections' sockets and the edges'
// eventfd.
func (pl *poller) open(ctx context.Context) error {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	pl.epfd = epfd
	for i := range pl.conns {
		c := &pl.conns[i]
		if c.fd, err = c.rs.FD(); err != nil {
			return err
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return err
		}
	}
	// The edges wake the loop through an eventfd, so connections held at
	// the start go on at once when the window begins, not at the next
	// timeout.
	pl.wake, pl.stopWaker, err = edgeWaker(ctx, epfd, len(pl.conns), pl.ed)
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
		pl.wakes++
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
			if int(ev.Fd) == len(pl.conns) {
				var b [8]byte
				_, _, _ = syscall.RawSyscall(syscall.SYS_READ, uintptr(pl.wake), uintptr(unsafe.Pointer(&b[0])), 8)
				continue
			}
			if err := pl.readable(&pl.conns[ev.Fd]); err != nil {
				return err
			}
		}
		if err := pl.fire(); err != nil {
			return err
		}
	}
}

// edges sees the window's edges that came since the last look, and moves
// the connections each concerns: those free flush at the start and stop
// at the end at once, as a goroutine's sleep ends at an edge; those held
// go on. A terminal's sleep goes on across the start.
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
		pl.cpuBegun, pl.wakesBegun = proc.ThreadCPU(), pl.wakes
	default:
	}
	select {
	case <-pl.stop:
		pl.ph.stopping, pl.stop, moved = true, nil, true
		pl.cpuStopped, pl.wakesStopped = proc.ThreadCPU(), pl.wakes
	default:
	}
	if !moved {
		return nil
	}
	pl.free = pl.free[:0] // release puts back those still free
	for i := range pl.conns {
		if st := pl.conns[i].state; st == connHeld || st == connFree {
			if err := pl.release(&pl.conns[i]); err != nil {
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
		timeout = min(timeout, max(0, time.Duration(pl.timers[0].wake-pl.clock())))
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

// fire moves the terminals whose timers are due: a think time's end
// deals the next transaction, keying's end or the schedule makes it due.
func (pl *poller) fire() error {
	if pl.ph.stopping {
		return nil // the connections are ending: no transaction starts
	}
	now := time.Now()
	for len(pl.timers) > 0 && pl.timers[0].wake <= int64(now.Sub(pl.base)) {
		i := int(pl.timers.pop().id)
		pt := &pl.terms[i].pt
		var err error
		if pt.thinking {
			pt.thinking = false
			err = pl.draw(i, now)
		} else {
			err = pl.due(i, now)
		}
		if err != nil {
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

// timer is a terminal's sleep on its thread's timers, until wake (in
// nanoseconds from the poller's base: 16 bytes an entry, an integer to
// compare); a terminal has one at most, and none is cancelled (the
// window's end stops every one).
type timer struct {
	wake int64
	id   int32
}

// clock is now on the poller's timers.
func (pl *poller) clock() int64 { return int64(time.Since(pl.base)) }

// sleep puts terminal i on the timers until at.
func (pl *poller) sleep(i int, at time.Time) {
	pl.terms[i].pt.state = termSleeping
	pl.timers.push(timer{wake: int64(at.Sub(pl.base)), id: int32(i)})
}

// timerHeap is a thread's timers, the earliest first: a binary heap on a
// slice, with no interface to box an entry into.
type timerHeap []timer

func (h *timerHeap) push(t timer) {
	*h = append(*h, t)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if s[i].wake >= s[up].wake {
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
		if l < len(s) && s[l].wake < s[small].wake {
			small = l
		}
		if r < len(s) && s[r].wake < s[small].wake {
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
