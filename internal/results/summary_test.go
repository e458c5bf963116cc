package results

import "testing"

// The verdict's line says what its baseline was made of: the runs taken,
// the regressed ones left out, and those skipped for want of a copy.
func TestBaselineSummary(t *testing.T) {
	for _, c := range []struct {
		b    Baseline
		want string
	}{
		{Baseline{Spec: "last", Runs: []string{"a", "b", "c"}, Verdict: BaselinePass}, "against the baseline last (3 stored runs): pass"},
		{Baseline{Spec: "last", Runs: []string{"a"}, LeftOut: []string{"x@1"}, NoCopy: 2, Verdict: BaselineNone, Reason: "too few"},
			"against the baseline last (1 stored run; 1 newer run that regressed or ran on a busy host left out until accepted, e.g. calibra store accept x@1; " +
				"2 runs skipped, recorded before the store kept results.json (calibra store import DIR keeps it)): no verdict: too few"},
	} {
		if got := c.b.Summary(); got != c.want {
			t.Errorf("Summary:\n got %s\nwant %s", got, c.want)
		}
	}
}
