package cli

import (
	"context"

	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/store"
)

// follow records the run directory in the store as the run starts and
// keeps its progress there until it ends (calibra serve's live page); no
// live record when the store is off.
func (a *app) follow(ctx context.Context, dir string) (runner.Live, error) {
	if a.store.None {
		return nil, nil
	}
	s, err := a.openSpec(ctx, store.Create)
	if err != nil {
		return nil, err
	}
	l, err := s.Follow(ctx, dir)
	if err != nil {
		s.Close()
		return nil, err
	}
	return liveRecord{l, s}, nil
}

// liveRecord is a run's live record and the store it is written to, which
// it closes at the end.
type liveRecord struct {
	*store.Live
	s *store.Store
}

func (l liveRecord) End(drop bool) {
	// What cannot be removed is left behind harmless: serve reads the
	// live rows only of a run the store lists as running.
	_ = l.Live.End(context.Background(), drop)
	l.s.Close()
}
