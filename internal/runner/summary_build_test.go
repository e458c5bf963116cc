package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// An interrupted build measured nothing: its summary says so, never
// "0 MB in 0.0 s = 0.0 MB/s".
func TestInterruptedBuildSummaryShowsNoZeros(t *testing.T) {
	r := &results.Run{Meta: results.Meta{Command: "oltp build"}, Steps: []results.Step{{
		StepHeader: results.StepHeader{Kind: results.KindOLTPBuild, Status: results.StatusInterrupted},
		Body:       &results.OLTPBuild{Warehouses: 1},
	}}}
	got := SummaryText(r, "interrupted")
	if !strings.Contains(got, "build      1 warehouses, not measured (interrupted)") || strings.Contains(got, "MB/s") {
		t.Errorf("summary of an interrupted build:\n%s", got)
	}
}
