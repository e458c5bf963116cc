package oltppg

import (
	"context"
	"sync"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// taskKind orders a table's build: its load, its index builds, its seal
// (primary key constraint and vacuum).
type taskKind int

const (
	taskLoad taskKind = iota
	taskIndex
	taskSeal
	taskKinds
)

// task is one step of the build, run on one connection.
type task struct {
	kind    taskKind
	table   tpcc.Table
	batches []oltp.Batch // a load's
	sql     []string     // an index build's or a seal's statements
	then    []*task      // the tasks that wait for this one
	after   int          // the tasks this one waits for, not yet finished
}

// sched hands the build's tasks to the connections: a task is ready once
// every task it waits for has finished, and the tasks a finished one frees
// go first, so a loaded table's indexes build before the next load starts.
// The first failure stops everything.
type sched struct {
	mu     sync.Mutex
	cond   *sync.Cond
	ready  []*task
	left   [taskKinds]int
	err    error
	halted bool
	// loaded, indexed and sealed close when every task of their kind has
	// finished, or at the first failure.
	loaded, indexed, sealed chan struct{}
	closed                  [taskKinds]bool
}

func newSched(loads []*task) *sched {
	s := &sched{ready: loads, loaded: make(chan struct{}), indexed: make(chan struct{}), sealed: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	seen := map[*task]bool{}
	var count func(ts []*task)
	count = func(ts []*task) {
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				s.left[t.kind]++
				count(t.then)
			}
		}
	}
	count(loads)
	for k := range taskKinds {
		if s.left[k] == 0 {
			s.close(k)
		}
	}
	return s
}

func (s *sched) done(k taskKind) chan struct{} {
	return [taskKinds]chan struct{}{s.loaded, s.indexed, s.sealed}[k]
}

// close closes kind k's channel once; s.mu is held (or s not yet shared).
func (s *sched) close(k taskKind) {
	if !s.closed[k] {
		s.closed[k] = true
		close(s.done(k))
	}
}

// next waits for a ready task; nil when none is left or the build failed
// or halted.
func (s *sched) next() *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.ready) == 0 && s.err == nil && !s.halted && s.unfinished() > 0 {
		s.cond.Wait()
	}
	if s.err != nil || s.halted || len(s.ready) == 0 {
		return nil
	}
	t := s.ready[0]
	s.ready = s.ready[1:]
	return t
}

func (s *sched) unfinished() int {
	n := 0
	for _, l := range s.left {
		n += l
	}
	return n
}

// finish records t's end: an error fails the build, a success frees the
// tasks that waited only for t.
func (s *sched) finish(t *task, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.cond.Broadcast()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		for k := range taskKinds {
			s.close(k)
		}
		return
	}
	if s.left[t.kind]--; s.left[t.kind] == 0 {
		s.close(t.kind)
	}
	var freed []*task
	for _, n := range t.then {
		if n.after--; n.after == 0 {
			freed = append(freed, n)
		}
	}
	s.ready = append(freed, s.ready...)
}

// halt stops handing out tasks (the loader is closing).
func (s *sched) halt() {
	s.mu.Lock()
	s.halted = true
	s.mu.Unlock()
	s.cond.Broadcast()
}

// wait blocks until ch closes, then returns the build's failure, if any.
func (s *sched) wait(ctx context.Context, ch chan struct{}) error {
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
