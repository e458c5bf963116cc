package runner

import (
	"context"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/progress"
)

// Live is a run's record in the results store while it runs (calibra
// serve's live page), made by Env.Live as the run starts.
type Live interface {
	// Phase is a line the progress printed: a step starting or ending.
	Phase(line string)
	// Second is one second of a timed load: the columns and cells of its
	// row in timeseries.csv.
	Second(at time.Time, columns, cells []string)
	// End stops following the run once it was recorded as it ended; drop
	// removes its record, for a run that leaves no run directory.
	End(drop bool)
}

// follow starts the run's live record, when the store takes one; a store
// that cannot be written is a warning, as it is for the run's record.
func (e Env) follow(ctx context.Context, dir string, prog *progress.Printer) Live {
	if e.Live == nil {
		return nil
	}
	l, err := e.Live(ctx, dir)
	if err != nil {
		prog.Phase("warning: the run is not shown live in the results store: %v", err)
	}
	if l == nil {
		return nil
	}
	prog.OnPhase(l.Phase)
	return l
}

// onTick hands each second of an oltp load to the live record, in the
// cells timeseries.csv gives it; nil without a live record.
func (s *Session) onTick() func(oltp.Tick) {
	if s.live == nil {
		return nil
	}
	columns := oltp.TickColumns(nil).Header()
	return func(t oltp.Tick) { s.live.Second(t.At, columns, oltp.TickColumns{t}.Row(t.At)) }
}
