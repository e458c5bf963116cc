package cli

import (
	"encoding/json"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"path/filepath"
	"testing"
)

// The acceptance: compare --format json of two single runs has no
// row (and no headline bar) whose verdict is better or worse, and it opens
// with the headline by readable names; repeated runs are still judged.
func TestCompareJSONVerdicts(t *testing.T) {
	type table struct {
		Summary []struct {
			Title   string
			Verdict []string
		}
		Rows []struct {
			Metric string
			Deltas []*struct{ Verdict string }
		}
	}
	judged := func(a, b string) (int, table) {
		code, stdout, stderr := clitest.Run(t, "compare", filepath.Join(fixtureRuns, a), filepath.Join(fixtureRuns, b), "--format", "json")
		var tab table
		if err := json.Unmarshal([]byte(stdout), &tab); code != 0 || err != nil {
			t.Fatalf("exit %d, %v: %s", code, err, stderr)
		}
		n := 0
		for _, r := range tab.Rows {
			if d := r.Deltas[1]; d != nil && (d.Verdict == "better" || d.Verdict == "worse") {
				n++
			}
		}
		for _, s := range tab.Summary {
			if v := s.Verdict[1]; v == "better" || v == "worse" {
				n++
			}
		}
		return n, tab
	}
	if n, tab := judged("oltp-base", "oltp-xss"); n != 0 || len(tab.Summary) == 0 || tab.Summary[0].Title != "NOPM" {
		t.Errorf("single runs: %d better or worse, summary %+v", n, tab.Summary)
	}
	if n, _ := judged("repeats-a", "repeats-b"); n == 0 {
		t.Error("5 repeats a side with NOPM +25%: nothing judged")
	}
}
