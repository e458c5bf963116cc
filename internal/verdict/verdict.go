// Package verdict decides what limited a step's figures, from the evidence
// its observe block holds, by a few conservative rules in one place: a
// figure is called storage-bound only when the storage's own counters show
// it busy.
package verdict

import (
	"cmp"
	"fmt"
	"math"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// What can limit a step (results.json's limited_by).
const (
	Storage = "storage"
	CPU     = "cpu"
	Cache   = "cache"
	WAL     = "wal"
	Lock    = "lock"
	Driver  = "driver"
	Host    = "host"
	Unknown = "unknown"
)

// The thresholds of the rules, in the order they are tried (README, "What
// limited a figure").
const (
	// DriverSharePct: calibra's own CPU, as a share of the machine, above
	// which the load generator, not the database, set the pace.
	DriverSharePct = 25.0
	// HostSharePct: processes outside calibra, its children and the
	// database server used this share of the machine: another load.
	HostSharePct = 20.0
	// HostNoticePct: another load this large is worth a warning even when
	// it did not decide the verdict.
	HostNoticePct = 10.0
	// DiskUtilPct: the device had an I/O in flight this share of the window.
	DiskUtilPct = 80.0
	// CPUBusyPct: all CPUs busy (100 − idle − iowait) this share of the time.
	CPUBusyPct = 90.0
	// WaitSharePct: a wait class took this share of the database's time.
	WaitSharePct = 30.0
	// HitPct: the database found this share of its blocks in its cache.
	HitPct = 99.0
)

// Decide says what limited a step whose window observe describes, with the
// evidence; driverPct is calibra's own CPU share of the machine, nil when
// the step does not measure it.
func Decide(o *results.Observe, driverPct *float64) (string, *results.Evidence) {
	return DecideWith(o, driverPct, Options{})
}

// Options sharpen Decide for a step that knows more about its load.
type Options struct {
	// ServerSide: the server issues the work itself (many reads a call),
	// so calibra's own CPU, still given as evidence, cannot set the pace.
	ServerSide bool
	// Nearest: when no rule holds, name the resource nearest its
	// threshold (at least NearestOfThreshold of the way there) rather than
	// unknown, and say so in the rule.
	Nearest bool
	// Load is what reached the device over the window as a share of what
	// the run's device step did at the nearest spec; nil without one.
	Load *Load
	// Writes: the figure is of writes, so the cache rule (about the
	// blocks read) does not apply.
	Writes bool
	// Flush is a commit point's flush path; nil for other points. A
	// commit point writes.
	Flush *Flush
	// Log is the engine's name for its log of changes ("WAL", "redo
	// log") in the rules' words; the neutral word when empty.
	Log string
	// Waits says what the engine's waits mean (its terms' WaitKind);
	// nil: no wait decides the verdict.
	Waits terms.WaitKinds
}

// log is the engine's log in its words.
func (o Options) log() string { return cmp.Or(o.Log, terms.Neutral.Log) }

// Load is the device's own rate over a window against its capability.
type Load struct {
	Pct float64
	// What says it with its figures, e.g. "23802 reads/s reached the
	// device: 94% of the 8k-randread it did at 16 outstanding (25300 IOPS)".
	What string
	// Floor: Pct is a lower bound of the load (a window's reads or its
	// writes alone, each against its own device point): it can show the
	// device saturated, never that it was not.
	Floor bool
}

// low says the load shows the device far from saturated.
func (l *Load) low() bool { return l != nil && !l.Floor && l.Pct < DeviceLoadLowPct }

// ceiling says the device point is a ceiling for this load: far above
// it, the device step measured less than the device does at this load
// (larger I/Os, a readahead's), which says nothing of saturation.
func (l *Load) ceiling() bool { return l != nil && l.Pct <= DeviceLoadMaxPct }

// Flush is the time of a commit spent flushing the WAL: FlushMs is the
// server's mean WAL sync, or the device's write await where the server
// does not time its syncs (Source says which), CommitMs the commit's mean.
type Flush struct {
	FlushMs, CommitMs float64
	Source            string
}

// Thresholds of the rules that use the device step and the flush path.
const (
	// DiskSaturatedPct: a device busy this share of the window is storage
	// even when another load shares the host (which is then a caveat).
	DiskSaturatedPct = 95.0
	// DeviceLoadPct: the device did this share of what its device step
	// measured at the nearest spec: the storage set the pace, whatever
	// its busy time says.
	DeviceLoadPct = 90.0
	// DeviceLoadLowPct: below this share the device's busy time alone is
	// not saturation (a device that serves I/Os in parallel is busy long
	// before it is full).
	DeviceLoadLowPct = 50.0
	// DeviceLoadMaxPct: above this share the device step's point was no
	// ceiling for the load, and the load decides nothing.
	DeviceLoadMaxPct = 110.0
	// FlushSharePct: the WAL flush took this share of a commit's time.
	FlushSharePct = 50.0
)

// NearestOfThreshold is how near its threshold a resource must be for
// Options.Nearest to name it.
const NearestOfThreshold = 0.5

// DecideWith is Decide with options.
func DecideWith(o *results.Observe, driverPct *float64, opts Options) (string, *results.Evidence) {
	if o == nil || o.CPUBusyPct == nil {
		return Unknown, &results.Evidence{Rule: "no observations of the window"}
	}
	ev, wait := evidence(o, driverPct, opts)
	by, rule := firstRule(ev, wait, opts)
	if by == "" && opts.Nearest {
		by, rule, _ = nearest(ev, wait, opts)
	}
	if by == "" {
		by, rule = Unknown, "neither CPU, device, data-file I/O, locks, WAL nor the cache stands out"
	}
	if opts.Load.low() && ev.DiskUtilPct != nil && *ev.DiskUtilPct >= DiskUtilPct {
		rule += fmt.Sprintf("; the device was busy %.0f%% of the window, yet did %.0f%% of what it did at the nearest spec: busy time is not saturation on a device that serves I/Os in parallel",
			*ev.DiskUtilPct, *ev.DeviceLoadPct)
	}
	ev.Rule = rule
	return by, ev
}

// evidence gathers the window's figures the rules read, and the kind of
// its top wait.
func evidence(o *results.Observe, driverPct *float64, opts Options) (*results.Evidence, terms.WaitKind) {
	ev := &results.Evidence{CPUBusyPct: o.CPUBusyPct, DriverCPUPct: driverPct, CPUOutsidePct: o.CPUOutsidePct}
	if d := o.Disk; d != nil {
		ev.DiskUtilPct, ev.DiskAwaitMs, ev.DiskReadIOPS = d.UtilPct, d.AwaitMs, d.RIOPS
	}
	if db := o.DB; db != nil {
		ev.HitPct = db.HitPct
		if db.BlksRead != nil && o.WindowS > 0 {
			r := float64(*db.BlksRead) / o.WindowS
			ev.DBReadsPerS = &r
		}
	}
	class, wait, share := topWait(o.Waits, opts.Waits)
	if class != "" {
		ev.TopWait, ev.TopWaitSharePct = class, &share
	}
	if opts.Load != nil {
		ev.DeviceLoadPct = &opts.Load.Pct
	}
	if f := opts.Flush; f != nil && f.CommitMs > 0 {
		share := math.Round(math.Min(1000, 1000*f.FlushMs/f.CommitMs)) / 10
		ev.FlushSharePct = &share
	}
	return ev, wait
}

// firstRule is the first rule that holds, in order, with its sentence;
// "" when none does. wait is the kind of the evidence's top wait.
func firstRule(ev *results.Evidence, wait terms.WaitKind, opts Options) (string, string) {
	at := func(v *float64, threshold float64) bool { return v != nil && *v >= threshold }
	// A device busy most of the window is saturated unless the device
	// step shows it did far less than it can.
	busy := func(threshold float64) bool {
		return at(ev.DiskUtilPct, threshold) && !opts.Load.low()
	}
	switch {
	case at(ev.DeviceLoadPct, DeviceLoadPct) && opts.Load.ceiling():
		return Storage, fmt.Sprintf("%s (≥ %.0f%%)", opts.Load.What, DeviceLoadPct) + hostCaveat(ev)
	case busy(DiskSaturatedPct):
		return Storage, fmt.Sprintf("the device was busy %.0f%% of the window (≥ %.0f%%)", *ev.DiskUtilPct, DiskSaturatedPct) + hostCaveat(ev)
	case at(ev.DriverCPUPct, DriverSharePct) && !opts.ServerSide:
		return Driver, fmt.Sprintf("calibra itself used %.0f%% of the machine (≥ %.0f%%)", *ev.DriverCPUPct, DriverSharePct)
	case at(ev.CPUOutsidePct, HostSharePct):
		return Host, fmt.Sprintf("processes outside calibra and the database used %.0f%% of the machine (≥ %.0f%%): another load on the host", *ev.CPUOutsidePct, HostSharePct)
	case busy(DiskUtilPct):
		return Storage, fmt.Sprintf("the device was busy %.0f%% of the window (≥ %.0f%%)", *ev.DiskUtilPct, DiskUtilPct)
	case at(ev.CPUBusyPct, CPUBusyPct):
		return CPU, fmt.Sprintf("the CPUs were busy %.0f%% of the window (≥ %.0f%%) and the device was not saturated", *ev.CPUBusyPct, CPUBusyPct)
	case at(ev.FlushSharePct, FlushSharePct):
		return Storage, fmt.Sprintf("the %s flush took %.0f%% of a commit's time (%s %.3f ms of %.3f ms; ≥ %.0f%%): the device's flush path set the pace",
			opts.log(), *ev.FlushSharePct, opts.Flush.Source, opts.Flush.FlushMs, opts.Flush.CommitMs, FlushSharePct)
	case at(ev.TopWaitSharePct, WaitSharePct) && wait == terms.LockWait:
		return Lock, fmt.Sprintf("%s waits took %.0f%% of the database's time (≥ %.0f%%)", ev.TopWait, *ev.TopWaitSharePct, WaitSharePct)
	case at(ev.TopWaitSharePct, WaitSharePct) && wait == terms.CommitWait:
		return WAL, fmt.Sprintf("%s writes and syncs took %.0f%% of the database's time (≥ %.0f%%)", opts.log(), *ev.TopWaitSharePct, WaitSharePct)
	case at(ev.TopWaitSharePct, WaitSharePct) && wait == terms.StorageWait:
		return Storage, fmt.Sprintf("data-file I/O took %.0f%% of the database's time (≥ %.0f%%): the device's latency set the pace at this concurrency", *ev.TopWaitSharePct, WaitSharePct) + moreToGive(opts.Load)
	case at(ev.HitPct, HitPct) && !opts.Writes && opts.Flush == nil:
		return Cache, fmt.Sprintf("%.1f%% of the blocks read were found in the database cache (≥ %.0f%%), and neither CPU nor device was saturated", *ev.HitPct, HitPct)
	}
	return "", ""
}

// moreToGive says, beside a latency-bound verdict, that the device did
// far more at its nearest measured point: more concurrent I/O would reach
// more.
func moreToGive(l *Load) string {
	if !l.low() {
		return ""
	}
	return fmt.Sprintf("; the device did %.0f%% of its nearest measured point, so more concurrent I/O would reach more", l.Pct)
}

// hostCaveat names another load on the host beside a storage verdict: it
// may have slowed the figures, but the device was saturated.
func hostCaveat(ev *results.Evidence) string {
	if ev.CPUOutsidePct == nil || *ev.CPUOutsidePct < HostSharePct {
		return ""
	}
	return fmt.Sprintf("; caveat: processes outside calibra and the database used %.0f%% of the machine", *ev.CPUOutsidePct)
}

// topWait sums the waits by the class kindOf puts each under and returns
// the largest, with its kind and share; a session on CPU is not waiting.
// Without kindOf no wait is judged.
func topWait(waits []results.Wait, kindOf terms.WaitKinds) (string, terms.WaitKind, float64) {
	if kindOf == nil {
		return "", terms.OtherWait, 0
	}
	shares, kinds := map[string]float64{}, map[string]terms.WaitKind{}
	for _, w := range waits {
		class, kind := kindOf(w.Class, w.Event)
		if kind == terms.OnCPU {
			continue
		}
		shares[class] += w.SharePct
		kinds[class] = kind
	}
	best, top := "", 0.0
	for class, share := range shares {
		if share > top || share == top && class < best {
			best, top = class, share
		}
	}
	return best, kinds[best], top
}
