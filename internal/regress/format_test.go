package regress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/hostiletest"
	"github.com/calibra-bench/calibra/internal/results"
)

// The verdict against a baseline names stored runs' labels and steps,
// which another account's imported run may have written: every format
// shows them with no control or bidirectional character raw, and the CSV
// guards the formula.
func TestWriteEscapesStoredText(t *testing.T) {
	h := hostiletest.Text
	b := &results.Baseline{Spec: h, Runs: []string{h}, Labels: []string{h}, Target: h, Verdict: results.BaselineNone, Reason: h,
		Figures: []results.BaselineFigure{{Step: h, Metric: "nopm", Title: h, Unit: h, Verdict: h}}}
	for _, f := range []string{"text", "md", "csv", "json"} {
		var out bytes.Buffer
		if err := Write(&out, b, f); err != nil {
			t.Fatal(err)
		}
		hostiletest.Check(t, "the baseline's "+f, out.String(), false)
		if f == "csv" && !strings.Contains(out.String(), "\n'=cmd") {
			t.Errorf("the baseline's csv does not guard the formula:\n%s", out.String())
		}
	}
}
