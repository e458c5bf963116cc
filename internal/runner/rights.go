package runner

import (
	"context"

	"github.com/calibra-bench/calibra/internal/engine"
)

// rightsOf is a command's check of a --dsn account's rights: the check
// of its workload's dialect for the engine.
func rightsOf[D any](ds *engine.Dialects[D]) func(context.Context, engine.Engine) error {
	return func(ctx context.Context, e engine.Engine) error { return engine.CheckRights(ctx, ds, e) }
}
