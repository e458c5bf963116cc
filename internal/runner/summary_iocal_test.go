package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// An iocal point's warning (few operations, or operations that outlasted
// it) is said in the summary, under the step.
func TestIOCalSummarySaysWarnings(t *testing.T) {
	w := "seqwrite at 16 jobs was measured from 16 operations (fewer than 30): its latency mean and p99 are rough"
	var b strings.Builder
	writeIOCalSummary(&b, results.Step{}, &results.IOCal{SeqWrite: &results.IOCalSeq{Points: []results.IOCalPoint{{Jobs: 16, MBPS: 20}}}, Warnings: []string{w}})
	if !strings.Contains(b.String(), "  warning: "+w+"\n") {
		t.Errorf("summary:\n%s\nlacks the warning %q", b.String(), w)
	}
}
