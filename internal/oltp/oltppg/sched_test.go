package oltppg

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// runSched drives the plan of batches on n workers without a server; fail
// says which task fails. It returns the tasks in the order they finished.
func runSched(t *testing.T, batches []oltp.Batch, n int, fail func(*task) error) ([]*task, *sched) {
	t.Helper()
	s := newSched(plan(batches))
	var mu sync.Mutex
	var order []*task
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tk := s.next(); tk != nil; tk = s.next() {
				err := fail(tk)
				mu.Lock()
				order = append(order, tk)
				mu.Unlock()
				s.finish(tk, err)
			}
		}()
	}
	wg.Wait()
	return order, s
}

func testBatches() []oltp.Batch {
	return []oltp.Batch{{Table: tpcc.Stock, N: 0}, {Table: tpcc.Customer, N: 0}, {Table: tpcc.History, N: 0},
		{Table: tpcc.Stock, N: 1}, {Table: tpcc.Customer, N: 1}}
}

// Every table loads once with all its batches, its indexes after its load,
// its seal after its indexes, and every stage's channel closes.
func TestSchedOrder(t *testing.T) {
	order, s := runSched(t, testBatches(), 3, func(*task) error { return nil })
	pos := map[*task]int{}
	for i, tk := range order {
		pos[tk] = i
	}
	loads := 0
	for tk, i := range pos {
		for _, next := range tk.then {
			if j, ok := pos[next]; !ok || j < i {
				t.Errorf("%s %d finished before what waits for it (%s %d), or that never ran", tk.table, tk.kind, next.table, next.kind)
			}
		}
		if tk.kind == taskLoad {
			loads++
			if tk.table != tpcc.History && len(tk.batches) != 2 {
				t.Errorf("%s loads %d batches, want 2", tk.table, len(tk.batches))
			}
		}
	}
	// stock: load, pkey, seal; customer: load, pkey, name index, seal; history: load, seal.
	if loads != 3 || len(order) != 9 {
		t.Errorf("%d loads, %d tasks in all, want 3 and 9", loads, len(order))
	}
	for _, ch := range []chan struct{}{s.loaded, s.indexed, s.sealed} {
		if err := s.wait(context.Background(), ch); err != nil {
			t.Error(err)
		}
	}
}

// A failed task stops the build: nothing waiting for it runs, and every
// stage reports the failure.
func TestSchedFailure(t *testing.T) {
	boom := errors.New("boom")
	order, s := runSched(t, testBatches(), 2, func(tk *task) error {
		if tk.kind == taskLoad && tk.table == tpcc.Stock {
			return boom
		}
		return nil
	})
	for _, tk := range order {
		if tk.table == tpcc.Stock && tk.kind != taskLoad {
			t.Errorf("stock's %d ran after its load failed", tk.kind)
		}
	}
	if err := s.wait(context.Background(), s.sealed); !errors.Is(err, boom) {
		t.Errorf("the build ended with %v, want boom", err)
	}
}
