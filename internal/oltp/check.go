package oltp

import (
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// consistencyChecks are the conditions of clauses 3.3.2.1 to 3.3.2.4; the
// dialect counts the warehouses or districts that violate each.
var consistencyChecks = []struct{ id, name string }{
	{"3.3.2.1", "W_YTD = sum(D_YTD) for every warehouse"},
	{"3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for every district"},
	{"3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER for every district"},
	{"3.3.2.4", "sum(O_OL_CNT) = rows in ORDER-LINE for every district"},
}

// CheckConsistency runs the consistency conditions on ctl.
func CheckConsistency(ctx context.Context, ctl Control) (*results.Consistency, error) {
	c := &results.Consistency{OK: true}
	for _, chk := range consistencyChecks {
		bad, err := ctl.Violations(ctx, chk.id)
		if err != nil {
			return nil, fmt.Errorf("consistency check %s: %w", chk.id, err)
		}
		r := results.Check{ID: chk.id, Name: chk.name, OK: bad == 0, Violations: bad}
		if bad > 0 {
			r.Detail = fmt.Sprintf("%d warehouses or districts violate it", bad)
			c.OK = false
		}
		c.Checks = append(c.Checks, r)
	}
	return c, nil
}

// CheckBuilt checks a built schema, returning its warehouse count; an
// engine with no build is an input error.
func CheckBuilt(ctx context.Context, e engine.Engine) (*results.Consistency, int, error) {
	bi, err := Built(ctx, e)
	if err != nil {
		return nil, 0, err
	}
	if bi == nil {
		return nil, 0, fault.Input("build it first with 'calibra oltp build'", "there is no TPC-C-like schema to check")
	}
	c, err := Check(ctx, e)
	return c, bi.Warehouses, err
}
