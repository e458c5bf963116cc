package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// DefaultSLA bounds each multiple when --sla is not given.
const DefaultSLA = "read_p99<=5ms,commit_p99<=2ms"

// SLA is the latency bound a multiple of the profile must keep.
type SLA struct {
	ReadP99, CommitP99 time.Duration
}

// ParseSLA reads 'read_p99<=5ms,commit_p99<=2ms'; a bound left out keeps
// its default.
func ParseSLA(s string) (SLA, error) {
	sla := SLA{ReadP99: 5 * time.Millisecond, CommitP99: 2 * time.Millisecond}
	fix := "write it as 'read_p99<=5ms,commit_p99<=2ms'"
	for _, part := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "<=")
		if !ok {
			return sla, fault.Input(fix, "--sla %q holds %q, not KEY<=DURATION", s, part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(val))
		if err != nil || d <= 0 || d > time.Minute {
			return sla, fault.Input(fix, "--sla %q holds %q, not a duration from 1µs to 1m", s, val)
		}
		switch strings.TrimSpace(key) {
		case "read_p99":
			sla.ReadP99 = d
		case "commit_p99":
			sla.CommitP99 = d
		default:
			return sla, fault.Input(fix, "--sla %q bounds %q; it knows read_p99 and commit_p99", s, key)
		}
	}
	return sla, nil
}

func (s SLA) String() string {
	return fmt.Sprintf("read_p99<=%s,commit_p99<=%s", s.ReadP99, s.CommitP99)
}
