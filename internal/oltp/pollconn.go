package oltp

import (
	"errors"
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

// The polling driver's state machines: a connection's requests and a
// terminal's steps. A terminal is a user with a pollTerm, on its thread's
// timers while it keys, thinks or waits for its schedule, then due; a
// connection takes the next due terminal (its own user's, or with pooled
// connections the one due the longest), draws its inputs, sends its
// transaction and records its answer.

// connState is where a connection of the polling driver stands.
type connState uint8

const (
	connFree       connState = iota // no request in flight, no terminal due for it
	connCall                        // a transaction in flight, in one of its round trips
	connStartFlush                  // the flush at the window's start
	connStopFlush                   // the flush at its end
	connHeld                        // flushed at the start, waiting for the window to begin
	connDone
)

// termState is where a terminal of the polling driver stands.
type termState uint8

const (
	termSleeping termState = iota // keying, thinking or waiting for its schedule, on a timer
	termQueued                    // due, waiting for a connection
	termBusy                      // its transaction in flight
)

// pollTerm is a user's state on the polling driver: a terminal is this
// and its user, never a goroutine, so a hundred thousand fit a thread.
type pollTerm struct {
	state    termState
	thinking bool // its timer ends a think time, not keying
	t        TxType
	intended time.Time // the transaction's intended start: latency runs from it
	ready    time.Time // when it became due: a pooled connection's wait runs from it
}

// pconn is one connection of a polling thread.
type pconn struct {
	l        lease
	rs       RawSession
	fd       int
	id       int // its index in its poller
	state    connState
	sawStart bool
	term     int // the terminal whose transaction is in flight
	in       any
	inputs   TxInputs  // drawn for whichever terminal it serves
	window   bool      // the transaction in flight started inside the window
	began    time.Time // when its first request was sent
	out      []byte    // the request being written, or last written
	ans      []byte    // answer bytes read, ans[:n] not yet parsed
	n        int
}

// release gives connection c its next request: a flush the window's
// edge asks for, or the next due terminal's transaction; it holds the
// connection from its start flush until the window begins, and is done
// once the window ended.
func (pl *poller) release(c *pconn) error {
	ed, ph := pl.ed, pl.ph
	switch {
	case ph.stopping && c.state == connStopFlush, ph.stopping && !ed.flushStats:
		c.state = connDone
		pl.left--
		return nil
	case ph.stopping:
		c.state = connStopFlush
		ed.stopFlushes.Add(1)
		return c.send(c.rs.AppendFlushStats(c.out[:0]))
	case ph.started && !c.sawStart && ed.flushStats && c.state != connStartFlush:
		c.state = connStartFlush
		return c.send(c.rs.AppendFlushStats(c.out[:0]))
	case ph.started && !c.sawStart:
		c.sawStart = true
		ed.startAck.Done()
		fallthrough
	case c.sawStart && !ph.begun:
		c.state = connHeld
		return nil
	}
	if i := pl.nextDue(c); i >= 0 {
		return pl.call(c, i)
	}
	c.state = connFree
	if pl.pooled {
		pl.free = append(pl.free, int32(c.id))
	}
	return nil
}

// nextDue is the terminal c serves next, -1 when none is due: its own
// user, or the pool's terminal due the longest.
func (pl *poller) nextDue(c *pconn) int {
	if pl.pooled {
		return pl.queue.pop()
	}
	if pl.terms[c.id].pt.state == termQueued {
		return c.id
	}
	return -1
}

// draw deals terminal i's next transaction at now and puts it on the
// timers for its keying or schedule, if any.
func (pl *poller) draw(i int, now time.Time) error {
	u := pl.terms[i]
	pt := &u.pt
	pt.t = u.deck.Next()
	pt.intended = u.intendedStart(pt.t, now)
	if pt.intended.After(now) {
		pl.sleep(i, pt.intended)
		return nil
	}
	return pl.due(i, now)
}

// due makes terminal i wait for a connection from now: its own once free,
// or the first free one of the pool.
func (pl *poller) due(i int, now time.Time) error {
	u := pl.terms[i]
	u.pt.state, u.pt.ready = termQueued, now
	if !u.paced() {
		u.pt.intended = now
	}
	if !pl.pooled {
		if c := &pl.conns[i]; c.state == connFree {
			return pl.call(c, i)
		}
		return nil // its connection takes it once free
	}
	if n := len(pl.free); n > 0 {
		c := &pl.conns[pl.free[n-1]]
		pl.free = pl.free[:n-1]
		return pl.call(c, i)
	}
	pl.queue.push(i)
	return nil
}

// call sends terminal i's transaction on c, its inputs drawn now.
func (pl *poller) call(c *pconn, i int) error {
	pt := &pl.terms[i].pt
	c.state, c.term, pt.state = connCall, i, termBusy
	c.in, c.window = c.inputs.Draw(&pl.terms[i].term, pt.t), c.sawStart
	c.began = time.Now()
	return c.send(c.rs.AppendCall(c.out[:0], pt.t, c.in))
}

// send writes a whole request; a few hundred bytes fit the socket's
// buffer, which holds no earlier request, so a short write means the
// connection broke.
func (c *pconn) send(req []byte) error {
	c.out = req
	for len(req) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&req[0])), uintptr(len(req)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return lost(e)
		}
		req = req[n:]
	}
	return nil
}

// readable reads what c's socket holds and, for every whole answer, sends
// the transaction's next round trip or settles it.
func (pl *poller) readable(c *pconn) error {
	if c.n == len(c.ans) {
		c.ans = append(c.ans, make([]byte, len(c.ans))...)
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&c.ans[c.n])), uintptr(len(c.ans)-c.n))
	switch {
	case e == syscall.EAGAIN || e == syscall.EINTR:
		return nil
	case e != 0:
		return lost(e)
	case n == 0:
		return lost(errors.New("end of stream"))
	}
	c.n += int(n)
	for c.state == connCall || c.state == connStartFlush || c.state == connStopFlush {
		in, t := c.in, TxType(0)
		if c.state == connCall {
			t = pl.terms[c.term].pt.t
		} else {
			in = nil // a flush's answer
		}
		used, req, err := c.rs.Answer(c.ans[:c.n], t, in, c.out[:0])
		if used == 0 {
			return nil
		}
		c.n = copy(c.ans, c.ans[used:c.n])
		if len(req) > 0 { // the transaction's next round trip
			if err := c.send(req); err != nil {
				return err
			}
			continue
		}
		if err := pl.settle(c, err); err != nil {
			return err
		}
		if err := pl.release(c); err != nil {
			return err
		}
	}
	return nil
}

// settle files the answer of c's request in flight, and sends its
// terminal to think, or on to its next transaction.
func (pl *poller) settle(c *pconn, err error) error {
	switch c.state {
	case connStartFlush:
		c.sawStart = true
		pl.ed.startAck.Done()
		return nil
	case connStopFlush:
		return nil
	}
	u := pl.terms[c.term]
	pt := &u.pt
	end := time.Now()
	u.record(c.l, &c.inputs, outcome{t: pt.t, lat: end.Sub(pt.intended), wait: c.began.Sub(pt.ready), lag: c.began.Sub(pt.intended), err: err, inWindow: c.window})
	if err := u.judge(c.l, err); err != nil {
		return err
	}
	if u.keying > 0 {
		pt.thinking = true
		pl.sleep(c.term, end.Add(ThinkTime(pt.t, u.keying, unitFloat(u.term.Rng))))
		return nil
	}
	return pl.draw(c.term, end)
}

func lost(err error) error {
	return fmt.Errorf("the connection to the server was lost (%v): the server may have stopped, see logs/server.log", err)
}

// ring is a queue of terminals, each in it once at most: a slice as long
// as the terminals, used round.
type ring struct {
	ids     []int32
	head, n int
}

func (r *ring) push(i int) {
	r.ids[(r.head+r.n)%len(r.ids)] = int32(i)
	r.n++
}

// pop is the terminal queued first, -1 when none is.
func (r *ring) pop() int {
	if r.n == 0 {
		return -1
	}
	i := r.ids[r.head]
	r.head, r.n = (r.head+1)%len(r.ids), r.n-1
	return int(i)
}
