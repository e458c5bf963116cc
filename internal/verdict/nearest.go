package verdict

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
)

// nearest names the resource whose figure came nearest its rule's
// threshold, when none crossed it: a point at 89.6% CPU is the CPU's
// rather than unknown. It needs NearestOfThreshold of the way at least.
func nearest(ev *results.Evidence, opts Options) (string, string, bool) {
	type cand struct {
		by, what  string
		v, thresh float64
	}
	var cands []cand
	if ev.CPUBusyPct != nil {
		cands = append(cands, cand{CPU, "the CPUs were busy %.1f%% of the window", *ev.CPUBusyPct, CPUBusyPct})
	}
	if ev.DiskUtilPct != nil {
		cands = append(cands, cand{Storage, "the device was busy %.1f%% of the window", *ev.DiskUtilPct, DiskUtilPct})
	}
	if ev.CPUOutsidePct != nil {
		cands = append(cands, cand{Host, "processes outside calibra and the database used %.1f%% of the machine", *ev.CPUOutsidePct, HostSharePct})
	}
	if ev.DriverCPUPct != nil && !opts.ServerSide {
		cands = append(cands, cand{Driver, "calibra itself used %.1f%% of the machine", *ev.DriverCPUPct, DriverSharePct})
	}
	if ev.TopWaitSharePct != nil {
		switch ev.TopWait {
		case "WAL":
			cands = append(cands, cand{WAL, "WAL writes and syncs took %.1f%% of the database's time", *ev.TopWaitSharePct, WaitSharePct})
		case "Lock", "LWLock":
			cands = append(cands, cand{Lock, ev.TopWait + " waits took %.1f%% of the database's time", *ev.TopWaitSharePct, WaitSharePct})
		}
	}
	var best *cand
	for i := range cands {
		if c := &cands[i]; best == nil || c.v/c.thresh > best.v/best.thresh {
			best = c
		}
	}
	if best == nil || best.v/best.thresh < NearestOfThreshold {
		return "", "", false
	}
	rule := fmt.Sprintf("no rule's threshold was crossed; the nearest: "+best.what+" (threshold %.0f%%, %.0f%% of the way)",
		best.v, best.thresh, 100*best.v/best.thresh)
	return best.by, rule, true
}
