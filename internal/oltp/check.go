package oltp

import (
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// consistencyChecks are the conditions of clauses 3.3.2.1 to 3.3.2.4,
// each a query counting the warehouses or districts that violate it,
// written once in the SQL both dialects speak: a null-safe comparison is
// spelled out (IS DISTINCT FROM is PostgreSQL's, <=> MariaDB's) and the
// full join of 3.3.2.4 is a left join each way (MariaDB has none); a dialect only runs them (Control.Ints).
var consistencyChecks = []struct{ id, name, query string }{
	{"3.3.2.1", "W_YTD = sum(D_YTD) for every warehouse", `SELECT count(*) FROM warehouse w
		 LEFT JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id
		 WHERE d.ytd IS NULL OR w.w_ytd <> d.ytd`},
	{"3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for every district", `SELECT count(*) FROM district d
		 LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS m FROM orders GROUP BY o_w_id, o_d_id) o
		   ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id
		 LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n
		   ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id
		 WHERE o.m IS NULL OR d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m)`},
	{"3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER for every district", `SELECT count(*) FROM (SELECT max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n
		 FROM new_order GROUP BY no_w_id, no_d_id) x WHERE span <> n`},
	{"3.3.2.4", "sum(O_OL_CNT) = rows in ORDER-LINE for every district", `SELECT
		 (SELECT count(*) FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
		   LEFT JOIN (SELECT ol_w_id, ol_d_id, count(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l
		   ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
		   WHERE l.c IS NULL OR o.s <> l.c) +
		 (SELECT count(*) FROM (SELECT DISTINCT ol_w_id, ol_d_id FROM order_line) l
		   WHERE NOT EXISTS (SELECT 1 FROM orders WHERE o_w_id = l.ol_w_id AND o_d_id = l.ol_d_id))`},
}

// count runs a query of one count.
func count(ctx context.Context, ctl Control, query string) (int64, error) {
	rows, err := ctl.Ints(ctx, query)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("a count returned %d rows", len(rows))
	}
	return rows[0][0], nil
}

// CheckConsistency runs the consistency conditions on ctl.
func CheckConsistency(ctx context.Context, ctl Control) (*results.Consistency, error) {
	c := &results.Consistency{OK: true}
	for _, chk := range consistencyChecks {
		bad, err := count(ctx, ctl, chk.query)
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
