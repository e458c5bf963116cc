package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

func TestParseSLA(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   SLA
		errors bool
	}{
		{DefaultSLA, SLA{5 * time.Millisecond, 2 * time.Millisecond}, false},
		{"read_p99<=20ms", SLA{20 * time.Millisecond, 2 * time.Millisecond}, false},
		{" commit_p99 <= 500us ", SLA{5 * time.Millisecond, 500 * time.Microsecond}, false},
		{"read_p99<5ms", SLA{}, true},
		{"read_p99<=fast", SLA{}, true},
		{"write_p99<=5ms", SLA{}, true},
		{"read_p99<=0s", SLA{}, true},
	} {
		got, err := ParseSLA(tc.in)
		if (err != nil) != tc.errors || (!tc.errors && got != tc.want) {
			t.Errorf("ParseSLA(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// A multiple breaks the SLA on a latency over its bound, a rate short of
// what was asked, or no latency at all for what was asked.
func TestBroke(t *testing.T) {
	r := &runner{cfg: Config{SLA: SLA{ReadP99: 5 * time.Millisecond, CommitP99: 2 * time.Millisecond}}}
	fast := &results.ReplayLatency{P50: 0.5, P99: 1.5}
	for _, c := range []struct {
		name string
		st   results.ReplayStep
		want string // "" holds
	}{
		{"held", results.ReplayStep{AskedCommitsPS: 100, CommitsPS: 99, CommitLatMs: fast}, ""},
		{"slow commits", results.ReplayStep{AskedCommitsPS: 100, CommitsPS: 99, CommitLatMs: &results.ReplayLatency{P99: 3}}, "commit p99 3.00 ms > 2.00 ms"},
		{"short of commits", results.ReplayStep{AskedCommitsPS: 100, CommitsPS: 50, CommitLatMs: fast}, "commits 50/s of 100/s asked (50%)"},
		{"no commit due in the window made", results.ReplayStep{AskedCommitsPS: 1558, CommitsPS: 68}, "none of the commits due in the window was made in it"},
	} {
		if got := r.broke(c.st); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: broke %q, want %q", c.name, got, c.want)
		}
	}
}
