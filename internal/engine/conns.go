package engine

import (
	"context"
	"sync"
)

// OpenConns opens n sessions with open, returning those it opened also
// when one fails, so the caller can close them.
func OpenConns[C any](ctx context.Context, n int, open func(context.Context) (C, error)) ([]C, error) {
	conns := make([]C, 0, n)
	for range n {
		c, err := open(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// OnConns runs the jobs in order, each on the first free session (w is
// its index, for per-session state such as a reused buffer). The first
// error stops the others and is returned.
func OnConns[C, J any](ctx context.Context, conns []C, jobs []J, do func(ctx context.Context, w int, conn C, j J) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan J, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)
	errs := make(chan error, len(conns))
	var wg sync.WaitGroup
	for w, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				if ctx.Err() != nil {
					return
				}
				if err := do(ctx, w, conn, j); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}
