package engine

import (
	"context"

	"github.com/calibra-bench/calibra/internal/fault"
)

// RightsChecker is a workload's dialect that checks, before a run
// directory exists, that a --dsn server's account may do what the
// workload does there: a missing grant is one sentence naming the GRANT
// that gives it (an input error), not a run that fails part-way.
type RightsChecker interface {
	CheckRights(ctx context.Context) error
}

// CheckRights runs the check of e's dialect in ds, when it has one.
func CheckRights[D any](ctx context.Context, ds *Dialects[D], e Engine) error {
	d, err := ds.For(e)
	if err != nil {
		return err
	}
	if rc, ok := any(d).(RightsChecker); ok {
		return rc.CheckRights(ctx)
	}
	return nil
}

// CheckConnections refuses a command that opens more connections at once
// (want) than a --dsn server has free: past them the server refuses the
// rest part-way through the run.
func CheckConnections(free, want int) error {
	if want <= free {
		return nil
	}
	return fault.Input("give fewer users or jobs, or raise max_connections on the server",
		"the --dsn server has %d connections free and this command opens up to %d at once", free, want)
}
