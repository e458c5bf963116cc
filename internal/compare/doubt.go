package compare

import (
	"fmt"
	"math"
	"strings"
)

// A step's CPU busy differs "a lot" between two runs of the same step (the
// same configured load) when it differs by both of these: enough to be
// another load on a small host, not the jitter of two runs (two quick runs
// on the same disk differ by a few points).
const (
	contentionPoints = 20  // percentage points of all CPUs
	contentionRatio  = 1.5 // the busier window against the idler
)

// doubt says why a step's comparison may reflect the host rather than the
// storage: its CPU busy differs a lot between the runs, what limited it
// differs, or another load on the host limited it (hostRule: the rule of
// each run's host verdict). "" when nothing says so. Runs of different
// engines are expected to use the CPU differently and meet different
// limits: only another load on the host casts doubt on them.
func doubt(runs []RunInfo, limitedBy, hostRule []string, rows []Row, engines bool) string {
	var why []string
	for _, r := range rows {
		if r.Name != "cpu_busy_pct" || engines {
			continue
		}
		base := r.Values[0]
		for i := 1; i < len(runs); i++ {
			if v := r.Values[i]; v != nil && busyDiffers(base.Center, v.Center) {
				why = append(why, fmt.Sprintf("CPU busy %s in %s against %s in %s at the same configured load",
					base.Text("%"), runs[0].Label, v.Text("%"), runs[i].Label))
			}
		}
	}
	for i := 1; i < len(runs); i++ {
		a, b := limitedBy[0], limitedBy[i]
		if known(a) && known(b) && a != b && !engines {
			why = append(why, fmt.Sprintf("limited by %s in %s, by %s in %s", a, runs[0].Label, b, runs[i].Label))
		}
	}
	var host []string
	for i, l := range limitedBy {
		if strings.Contains(l, "host") {
			h := runs[i].Label
			if hostRule[i] != "" {
				h += " (" + hostRule[i] + ")"
			}
			host = append(host, h)
		}
	}
	if len(host) > 0 {
		why = append(why, "another load on the host limited it in "+strings.Join(host, " and "))
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + ". Another load on the host or a different bottleneck may explain its deltas rather than the storage; repeat the runs on a quiet host."
}

func busyDiffers(a, b float64) bool {
	lo, hi := math.Min(a, b), math.Max(a, b)
	return hi-lo >= contentionPoints && hi >= contentionRatio*lo
}

// known says whether a limited_by names something: "unknown" (the rules
// could not tell) differs from nothing.
func known(l string) bool { return l != "" && l != "unknown" }
