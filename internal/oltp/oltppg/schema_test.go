package oltppg

import (
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// A planned column is one of its table's (a misspelt one would leave the
// real column without statistics), and no statement turns one off.
func TestStatisticsSpareThePlannedColumns(t *testing.T) {
	stmts := strings.Join(statisticsDDL(), "\n")
	for _, tb := range tpcc.Tables() {
		if len(planned[tb]) == 0 {
			t.Errorf("%s: no planned columns", tb)
		}
		for _, c := range planned[tb] {
			if !slices.Contains(tb.Columns(), c) {
				t.Errorf("%s has no column %s", tb, c)
			}
			if strings.Contains(stmts, " "+c+" SET") {
				t.Errorf("the statistics of %s.%s are turned off", tb, c)
			}
		}
	}
	if !strings.Contains(stmts, "ALTER TABLE stock ALTER COLUMN s_dist_01 SET STATISTICS 0") {
		t.Errorf("stock's filler keeps its statistics:\n%s", stmts)
	}
}
