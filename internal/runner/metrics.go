package runner

import (
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/live"
	"github.com/calibra-bench/calibra/internal/oltp"
)

// startMetrics starts --metrics-listen's endpoint for command, exporting
// its board; nil and nothing started without the flag.
func startMetrics(ctx context.Context, o live.Options, command string) (*live.Endpoint, *live.Board, error) {
	if o.Listen == "" {
		if o.AllowRemote || o.TokenFile != "" {
			return nil, nil, fault.Input("add --metrics-listen HOST:PORT, or leave them out", "--allow-remote and --metrics-token-file protect --metrics-listen, which is not given")
		}
		return nil, nil, nil
	}
	b := live.NewBoard()
	b.Step(command)
	e, err := live.Start(ctx, o, b)
	if err != nil {
		return nil, nil, err
	}
	return e, b, nil
}

// announceMetrics says where the figures are.
func (s *Session) announceMetrics(e *live.Endpoint) {
	if e != nil {
		s.prog.Phase("live metrics: http://%s/metrics", e.Addr())
	}
}

// metricsStep names the step that runs on the board.
func (s *Session) metricsStep(format string, args ...any) {
	if s.metrics != nil {
		s.metrics.Step(fmt.Sprintf(format, args...))
	}
}

// watch is the board as the oltp load's Watcher; nil without one, so
// that the users keep no latencies for it.
func (s *Session) watch() oltp.Watcher {
	if s.metrics == nil {
		return nil
	}
	return s.metrics
}
