// Package verdict decides what limited a step's figures, from the evidence
// its observe block holds, by a few conservative rules in one place: a
// figure is called storage-bound only when the storage's own counters show
// it busy.
package verdict

import (
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
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
}

// NearestOfThreshold is how near its threshold a resource must be for
// Options.Nearest to name it.
const NearestOfThreshold = 0.5

// DecideWith is Decide with options.
func DecideWith(o *results.Observe, driverPct *float64, opts Options) (string, *results.Evidence) {
	if o == nil || o.CPUBusyPct == nil {
		return Unknown, &results.Evidence{Rule: "no observations of the window"}
	}
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
	class, share := topWait(o.Waits)
	if class != "" {
		ev.TopWait, ev.TopWaitSharePct = class, &share
	}
	switch {
	case driverPct != nil && *driverPct >= DriverSharePct && !opts.ServerSide:
		ev.Rule = fmt.Sprintf("calibra itself used %.0f%% of the machine (≥ %.0f%%)", *driverPct, DriverSharePct)
		return Driver, ev
	case o.CPUOutsidePct != nil && *o.CPUOutsidePct >= HostSharePct:
		ev.Rule = fmt.Sprintf("processes outside calibra and the database used %.0f%% of the machine (≥ %.0f%%): another load on the host", *o.CPUOutsidePct, HostSharePct)
		return Host, ev
	case ev.DiskUtilPct != nil && *ev.DiskUtilPct >= DiskUtilPct:
		ev.Rule = fmt.Sprintf("the device was busy %.0f%% of the window (≥ %.0f%%)", *ev.DiskUtilPct, DiskUtilPct)
		return Storage, ev
	case *o.CPUBusyPct >= CPUBusyPct:
		ev.Rule = fmt.Sprintf("the CPUs were busy %.0f%% of the window (≥ %.0f%%) and the device was not saturated", *o.CPUBusyPct, CPUBusyPct)
		return CPU, ev
	case class == "Lock" || class == "LWLock":
		if share >= WaitSharePct {
			ev.Rule = fmt.Sprintf("%s waits took %.0f%% of the database's time (≥ %.0f%%)", class, share, WaitSharePct)
			return Lock, ev
		}
	case class == "WAL":
		if share >= WaitSharePct {
			ev.Rule = fmt.Sprintf("WAL writes and syncs took %.0f%% of the database's time (≥ %.0f%%)", share, WaitSharePct)
			return WAL, ev
		}
	}
	if ev.HitPct != nil && *ev.HitPct >= HitPct {
		ev.Rule = fmt.Sprintf("%.1f%% of the blocks read were found in the database cache (≥ %.0f%%), and neither CPU nor device was saturated", *ev.HitPct, HitPct)
		return Cache, ev
	}
	if opts.Nearest {
		if by, rule, ok := nearest(ev, opts); ok {
			ev.Rule = rule
			return by, ev
		}
	}
	ev.Rule = "neither CPU, device, locks, WAL nor the cache stands out"
	return Unknown, ev
}

// topWait sums the waits by class, WAL I/O counted apart from data-file
// I/O, and returns the largest with its share; CPU is not a wait.
func topWait(waits []results.Wait) (string, float64) {
	shares := map[string]float64{}
	for _, w := range waits {
		class := w.Class
		switch {
		case class == "CPU":
			continue
		case class == "IO" && strings.HasPrefix(strings.ToUpper(w.Event), "WAL"): // WalSync from 17
			class = "WAL"
		// MariaDB's performance_schema: row and metadata locks, and the
		// latches (mutexes, rw-locks) that play LWLock's part; the redo
		// log's file I/O is its WAL.
		case strings.HasPrefix(class, "lock/") || strings.HasPrefix(class, "synch/"):
			class = "Lock"
		case class == "io/file" && strings.Contains(w.Event, "log_file"):
			class = "WAL"
		}
		shares[class] += w.SharePct
	}
	best, top := "", 0.0
	for class, share := range shares {
		if share > top || share == top && class < best {
			best, top = class, share
		}
	}
	return best, top
}
