package dssmy

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/fault"
)

// Only the interval arithmetic changes, and none of PostgreSQL's is left.
func TestQueryRewritesOnlyIntervals(t *testing.T) {
	var d dialect
	var rewritten []int
	for q := 1; q <= dss.Queries; q++ {
		for _, p := range []dss.Params{dss.ValidationParams(q), dss.NewParams(7, 1, q, 1)} {
			ref := dss.Text(q, p)
			got := d.Query(q, ref)
			if pgInterval.MatchString(got) || dateMinusDays.MatchString(got) {
				t.Errorf("Q%d keeps PostgreSQL's interval arithmetic:\n%s", q, got)
			}
			if got == ref {
				continue
			}
			if p["DATE"] == "" && q != 1 {
				t.Errorf("Q%d has no date yet was rewritten", q)
			}
			if len(rewritten) == 0 || rewritten[len(rewritten)-1] != q {
				rewritten = append(rewritten, q)
			}
		}
	}
	if want := []int{1, 4, 5, 6, 10, 12, 14, 15, 20}; !reflect.DeepEqual(rewritten, want) {
		t.Errorf("rewrote %v, want %v", rewritten, want)
	}
	q1 := d.Query(1, dss.Text(1, dss.Params{"DELTA": "90"}))
	if !strings.Contains(q1, "l_shipdate <= date '1998-12-01' - interval 90 day") {
		t.Errorf("Q1:\n%s", q1)
	}
	q4 := d.Query(4, dss.Text(4, dss.Params{"DATE": "1993-07-01"}))
	if !strings.Contains(q4, "o_orderdate < date '1993-07-01' + interval 3 month") {
		t.Errorf("Q4:\n%s", q4)
	}
}

func TestByTableKeepsEachTablesOrder(t *testing.T) {
	got, err := byTable([]string{
		"ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
		"ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
		"CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
		"CREATE INDEX orders_cust ON orders (o_custkey)",
	})
	want := [][]string{
		{"ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)", "CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)"},
		{"ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)", "CREATE INDEX orders_cust ON orders (o_custkey)"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := byTable([]string{"VACUUM lineitem"}); err == nil {
		t.Error("a statement on no table was grouped")
	}
}

// A degree of parallelism MariaDB cannot give is bad input, before any
// connection.
func TestADopAboveZeroIsBadInput(t *testing.T) {
	_, err := dialect{}.Connect(context.Background(), 2)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "one thread") {
		t.Errorf("--dop 2: %v", err)
	}
}
