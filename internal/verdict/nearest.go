package verdict

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// nearest names the resource whose figure came nearest its rule's
// threshold, when none crossed it: a point at 89.6% CPU is the CPU's
// rather than unknown. It needs NearestOfThreshold of the way at least.
func nearest(ev *results.Evidence, wait terms.WaitKind, opts Options) (string, string, bool) {
	type cand struct {
		by, what  string
		v, thresh float64
	}
	var cands []cand
	add := func(by string, v *float64, thresh float64, format string) {
		if v != nil {
			cands = append(cands, cand{by, fmt.Sprintf(format, *v), *v, thresh})
		}
	}
	add(CPU, ev.CPUBusyPct, CPUBusyPct, "the CPUs were busy %.1f%% of the window")
	if l := opts.Load; l.ceiling() {
		cands = append(cands, cand{Storage, l.What, l.Pct, DeviceLoadPct})
	}
	if !opts.Load.ceiling() || opts.Load.Floor {
		// Without a load measured whole against a ceiling, the busy time,
		// which a parallel device fills long before it is full.
		add(Storage, ev.DiskUtilPct, DiskUtilPct, "the device was busy %.1f%% of the window")
	}
	add(Storage, ev.FlushSharePct, FlushSharePct, "the "+opts.log()+" flush took %.1f%% of a commit's time")
	add(Host, ev.CPUOutsidePct, HostSharePct, "processes outside calibra and the database used %.1f%% of the machine")
	if !opts.ServerSide {
		add(Driver, ev.DriverCPUPct, DriverSharePct, "calibra itself used %.1f%% of the machine")
	}
	switch wait {
	case terms.CommitWait:
		add(WAL, ev.TopWaitSharePct, WaitSharePct, opts.log()+" writes and syncs took %.1f%% of the database's time")
	case terms.LockWait:
		add(Lock, ev.TopWaitSharePct, WaitSharePct, ev.TopWait+" waits took %.1f%% of the database's time")
	case terms.StorageWait:
		add(Storage, ev.TopWaitSharePct, WaitSharePct, "data-file I/O took %.1f%% of the database's time")
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
	rule := fmt.Sprintf("no rule's threshold was crossed; the nearest: %s (threshold %.0f%%, %.0f%% of the way)",
		best.what, best.thresh, 100*best.v/best.thresh)
	return best.by, rule, true
}
