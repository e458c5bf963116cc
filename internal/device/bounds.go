package device

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// DefaultP99Bounds are the bounds of "IOPS at p99 ≤ X" when none are given.
const DefaultP99Bounds = "1ms,5ms"

// ParseBounds reads a comma-separated list of latency bounds, each above
// zero and at most most, each once, and sorts them.
func ParseBounds(flag, list string, most time.Duration) ([]time.Duration, error) {
	fix := fmt.Sprintf("give durations such as %s, each once, above 0 and at most %s", DefaultP99Bounds, most)
	var out []time.Duration
	for _, tok := range strings.Split(list, ",") {
		tok = strings.TrimSpace(tok)
		d, err := time.ParseDuration(tok)
		switch {
		case err != nil:
			return nil, fault.Input(fix, "%s %q holds %q, not a duration", flag, list, tok)
		case d <= 0:
			return nil, fault.Input(fix, "%s %q holds %s, which is not positive", flag, list, tok)
		case d > most:
			return nil, fault.Input(fix, "%s %q holds %s, too long a bound", flag, list, tok)
		case slices.Contains(out, d):
			return nil, fault.Input(fix, "%s %q lists %s twice", flag, list, tok)
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return out, nil
}

// atBounds answers, for one spec and each bound, "how many IOPS with p99
// at or under it?": over the spec's points (its sweep of outstanding
// I/O), the error-free one of the highest IOPS whose p99 is within it.
func atBounds(spec string, points []results.DevicePoint, bounds []time.Duration) []results.DeviceAtBound {
	var out []results.DeviceAtBound
	for _, b := range bounds {
		us := float64(b) / float64(time.Microsecond)
		a := results.DeviceAtBound{BoundUs: us}
		var best *results.DevicePoint
		var lowest float64
		measured := 0
		for i := range points {
			p := &points[i]
			if p.Spec != spec || p.Errors > 0 || p.LatUs == nil {
				continue
			}
			if measured == 0 || p.LatUs.P99 < lowest {
				lowest = p.LatUs.P99
			}
			measured++
			if p.LatUs.P99 <= us && (best == nil || p.IOPS > best.IOPS) {
				best = p
			}
		}
		switch {
		case best != nil:
			a.Point = &results.DeviceBest{QD: best.QD, IOPS: best.IOPS, MBps: best.MBps, P99Us: best.LatUs.P99,
				LimitedBy: best.LimitedBy, LimitedByEvidence: best.LimitedByEvidence}
			a.OutstandingIOs = best.OutstandingIOs
		case measured == 0:
			a.Missing = "no error-free point of this spec was measured"
		default:
			a.Missing = fmt.Sprintf("no point kept p99 at or under %s (the lowest was %s)", b, FormatMicros(lowest))
		}
		out = append(out, a)
	}
	return out
}
