package oltp

import (
	"context"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
)

// noDialect is an engine no oltp dialect is registered for; nothing but
// its name is ever called.
type noDialect struct{ engine.Engine }

func (noDialect) Name() string { return "nodialect" }

// Every entry point asks for the engine's dialect first: an engine without
// one is bad input (exit 2), before anything connects.
func TestAnEngineWithoutADialectIsBadInput(t *testing.T) {
	ctx := context.Background()
	e := noDialect{}
	_, buildErr := Build(ctx, e, BuildConfig{Warehouses: 1}, nil)
	_, _, runErr := Run(ctx, e, RunConfig{Users: 1}, nil)
	_, checkErr := Check(ctx, e)
	_, sessErr := NewSession(ctx, e, ModeClient)
	for _, err := range []error{buildErr, runErr, checkErr, sessErr} {
		if err == nil || !strings.Contains(err.Error(), "the oltp workload is not supported by nodialect") || fault.Code(err) != fault.ExitInput {
			t.Errorf("got %v, want the input error naming the engine", err)
		}
	}
}
