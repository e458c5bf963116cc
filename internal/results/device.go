package results

import (
	"fmt"
	"math"
)

// KindDevice is the device layer: fio over the storage under test.
const KindDevice = "device"

func init() {
	RegisterKind(KindDevice, func() any { return &Device{} })
}

// Device is a device-layer sweep (kind "device"): access specs over queue
// depths, run by fio.
type Device struct {
	FioPath          string         `json:"fio_path"`
	FioVersion       string         `json:"fio_version"`
	IOEngine         string         `json:"ioengine"`
	Direct           bool           `json:"direct"`
	Targets          []DeviceTarget `json:"targets"`
	WorkersPerTarget int            `json:"workers_per_target"`
	SizeBytes        int64          `json:"size_bytes"` // per worker
	RampS            float64        `json:"ramp_s"`
	RuntimeS         float64        `json:"runtime_s"`
	Repeats          int            `json:"repeats"`
	Seed             uint64         `json:"seed"`
	// LatencyBasis names fio's latency that lat_us holds: "clat",
	// submission to completion.
	LatencyBasis string  `json:"latency_basis"`
	MaxLatencyUs float64 `json:"max_latency_us"`
	// P99BoundsUs are the bounds each spec's iops_at_p99 answers for.
	P99BoundsUs []float64     `json:"p99_bounds_us,omitempty"`
	Specs       []DeviceSpec  `json:"specs"`
	Points      []DevicePoint `json:"points"`
	Notes       []string      `json:"notes,omitempty"`
	// FreshOutOfBox is true when each point is one run on a region written
	// once (a first look), false when it was held to steady state.
	FreshOutOfBox bool `json:"fresh_out_of_box"`
	// SteadyState is the method of a steady-state sweep; null otherwise.
	SteadyState *DeviceSteadyMethod `json:"steady_state,omitempty"`
}

// DeviceSteadyMethod is how a sweep was held to steady state (SNIA PTS
// 2.0): preconditioning, rounds of --runtime each, and the window criteria.
type DeviceSteadyMethod struct {
	// PreconditionBytes is what the workload-independent preconditioning
	// wrote per worker: PreconditionPasses x size_bytes in sequential
	// writes of PreconditionBlock bytes; 0 when the targets were not
	// writable.
	PreconditionBytes  int64   `json:"precondition_bytes"`
	PreconditionPasses int     `json:"precondition_passes"`
	PreconditionBlock  int64   `json:"precondition_block"`
	RoundS             float64 `json:"round_s"`
	MaxRounds          int     `json:"max_rounds"`
	WindowRounds       int     `json:"window_rounds"`
	RangeLimitPct      float64 `json:"range_limit_pct"`
	SlopeLimitPct      float64 `json:"slope_limit_pct"`
}

// DeviceSteady is one point's steady-state judgement over its rounds.
type DeviceSteady struct {
	Reached bool `json:"reached"`
	// Round is the last round (from 1) of the window judged: the first
	// window that held, else the last one.
	Round int `json:"round"`
	// RangePct is the window's (max - min) / mean x 100; SlopePct its
	// least-squares line's excursion, |slope| x (window - 1) / mean x 100.
	// Null when the window's mean was 0.
	RangePct *float64 `json:"range_pct"`
	SlopePct *float64 `json:"slope_pct"`
	// WindowMeanIOPS is the window's mean; FitSlope and FitIntercept its
	// best-fit line, IOPS = intercept + slope x round.
	WindowMeanIOPS float64 `json:"window_mean_iops"`
	FitSlope       float64 `json:"fit_slope"`
	FitIntercept   float64 `json:"fit_intercept"`
	// RoundsIOPS is every round's IOPS, in order, the window's included.
	RoundsIOPS []float64 `json:"rounds_iops"`
}

// DeviceTarget is one storage target.
type DeviceTarget struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // "directory", "file" or "block device"
	FS     string `json:"fs,omitempty"`
	Device string `json:"device,omitempty"`
}

// DeviceSpec is an access specification and its answer to "how many IOPS
// within the latency bound?".
type DeviceSpec struct {
	Name       string `json:"name"`
	BlockSize  int64  `json:"block_size"`
	ReadPct    int    `json:"read_pct"`
	RandomPct  int    `json:"random_pct"`
	AlignBytes int64  `json:"align"`
	// AtMaxLatency is the point with the highest IOPS whose p99 stays at or
	// under max_latency_us and that had no errors; for a sequential spec,
	// judged on throughput, the error-free point of the highest MB/s
	// (JudgedOn says which). Null when none qualifies, with the reason in
	// AtMaxLatencyMissing.
	JudgedOn            string      `json:"judged_on"` // "p99_bound" or "mbps"
	AtMaxLatency        *DeviceBest `json:"at_max_latency"`
	AtMaxLatencyMissing string      `json:"at_max_latency_missing,omitempty"`
	// IOPSAtP99 answers "how many IOPS with p99 at or under X?" for each
	// of the sweep's p99_bounds_us, in order: over the sweep of
	// outstanding I/O (workers x qd), the error-free point of the highest
	// IOPS whose p99 stays within the bound.
	IOPSAtP99 []DeviceAtBound `json:"iops_at_p99,omitempty"`
}

// DeviceAtBound is a spec's best point within one p99 bound; Point is
// null when none stays within it, with the reason in Missing.
type DeviceAtBound struct {
	BoundUs float64     `json:"bound_us"`
	Point   *DeviceBest `json:"point"`
	// OutstandingIOs is the point's workers x qd.
	OutstandingIOs int    `json:"outstanding_ios,omitempty"`
	Missing        string `json:"missing,omitempty"`
}

// DeviceBest is the point a spec's bound picked.
type DeviceBest struct {
	QD    int     `json:"qd"`
	IOPS  float64 `json:"iops"`
	MBps  float64 `json:"mbps"`
	P99Us float64 `json:"p99_us"`
	// LimitedBy is what bounded the point (internal/verdict).
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
}

// DevicePoint is one spec at one queue depth: the mean of its repeats.
type DevicePoint struct {
	Spec      string `json:"spec"`
	BlockSize int64  `json:"block_size"`
	ReadPct   int    `json:"read_pct"`
	RandomPct int    `json:"random_pct"`
	QD        int    `json:"qd"`      // per worker
	Workers   int    `json:"workers"` // over every target
	// OutstandingIOs is workers x qd: the load of Little's law.
	OutstandingIOs int `json:"outstanding_ios"`

	IOPS float64 `json:"iops"`
	MBps float64 `json:"mbps"` // 10^6 bytes per second
	// LatUs is null when no I/O completed (Errors and ErrNo say why).
	LatUs *DeviceLatency `json:"lat_us"`
	// Errors counts I/O errors: those fio counted and went on after, plus
	// one for each run a job ended on.
	Errors int64 `json:"errors"`
	// ErrNo is the first error a job ended on (errno), 0 when none did.
	ErrNo int `json:"errno,omitempty"`

	// Read and Write split a mixed spec by direction.
	Read  *DeviceDirection `json:"read,omitempty"`
	Write *DeviceDirection `json:"write,omitempty"`

	Repeats int           `json:"repeats"`
	Spread  *DeviceSpread `json:"spread,omitempty"` // with 2 or more repeats
	// WallS is the wall time of the point's runs, fio's start-up included.
	WallS float64  `json:"wall_s"`
	Raw   []string `json:"raw"` // its files under raw/, without extension
	// SteadyState is the point's steady-state judgement, null in a
	// fresh-out-of-box sweep. With it the point's figures are its
	// window's rounds merged.
	SteadyState *DeviceSteady `json:"steady_state,omitempty"`
	// FreshOutOfBox is true when the point was one run on a region written
	// once (the step's method, on the point so that it says it alone).
	FreshOutOfBox bool `json:"fresh_out_of_box,omitempty"`
	// Burst is set when the point's rate fell during a run and stayed
	// down (internal/device DetectBurst over fio's per-second IOPS logs).
	Burst *DeviceBurst `json:"burst,omitempty"`
	// HostLimitedFall is set instead of Burst when the rate fell as other
	// loads took the CPU of a machine that had some to spare before
	// (internal/device JudgeFallHost): the host's fall, not the storage's.
	HostLimitedFall *DeviceBurst `json:"host_limited_fall,omitempty"`
	// IOPSPerS is the point's IOPS each second, every run (or round) in
	// order after its ramp, from fio's per-second logs; WriteIOPSPerS the
	// writes alone, for a spec that writes (the write-saturation plot).
	IOPSPerS      []float64 `json:"iops_per_s,omitempty"`
	WriteIOPSPerS []float64 `json:"write_iops_per_s,omitempty"`
	// LimitedBy is what bounded the point, from the observations of its
	// runs' window (internal/verdict).
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
}

// HeadlineLimit is what limited the first spec's answer, the sweep's
// headline (4k random reads in the default specs); ok is false when it
// has none.
func (d *Device) HeadlineLimit() (string, *Evidence, bool) {
	if len(d.Specs) == 0 || d.Specs[0].AtMaxLatency == nil || d.Specs[0].AtMaxLatency.LimitedBy == "" {
		return "", nil, false
	}
	b := d.Specs[0].AtMaxLatency
	return b.LimitedBy, b.LimitedByEvidence.At(fmt.Sprintf("%s at qd %d", d.Specs[0].Name, b.QD)), true
}

// DeviceLatency is completion latency in microseconds. Percentiles come from
// fio's histogram of every I/O of the point (both directions, all repeats),
// read as fio reads it (the first bucket whose cumulative count reaches p).
type DeviceLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	// P9999 is the 99.99th percentile; absent from runs before it was kept.
	P9999 *float64 `json:"p9999,omitempty"`
	Max   float64  `json:"max"`
}

// DeviceDirection is one direction of a mixed point.
type DeviceDirection struct {
	IOPS  float64        `json:"iops"`
	MBps  float64        `json:"mbps"`
	LatUs *DeviceLatency `json:"lat_us"`
}

// DeviceSpread is how much a point's repeats differ.
type DeviceSpread struct {
	IOPSMin    float64 `json:"iops_min"`
	IOPSMax    float64 `json:"iops_max"`
	IOPSStddev float64 `json:"iops_stddev"` // sample standard deviation
	P99UsMin   float64 `json:"p99_us_min"`
	P99UsMax   float64 `json:"p99_us_max"`
}

// DeviceBurst is where a point's rate fell: its first run (with steady
// state, its rounds back to back) whose per-second IOPS had a burst.
type DeviceBurst struct {
	// FellAtS is the second where the rate fell, counted from the start
	// of the run Raw after its ramp (with steady state, of its rounds back
	// to back).
	FellAtS     int     `json:"fell_at_s"`
	PeakIOPS    float64 `json:"peak_iops"`    // the burst's rate (3-second running median)
	SettledIOPS float64 `json:"settled_iops"` // the median of the run's last quarter
	DropPct     float64 `json:"drop_pct"`     // (peak - settled) x 100 / peak
	// WrittenBytesBeforeFall is what the run wrote in its logged seconds
	// before the fall (its ramp and any preconditioning not counted).
	WrittenBytesBeforeFall int64  `json:"written_bytes_before_fall"`
	Raw                    string `json:"raw"` // the run's first file under raw/, without extension
	// Host is the host around the fall, absent without observers.
	Host *DeviceFallHost `json:"host,omitempty"`
}

// DeviceFallHost is the host before a fall and from it on, medians of the
// logged seconds: the CPU in per cent of the machine, and the device's
// mean time per I/O (null when its counters were not read).
type DeviceFallHost struct {
	BusyPctBefore    float64  `json:"busy_pct_before"`
	BusyPctAfter     float64  `json:"busy_pct_after"`
	OutsidePctBefore float64  `json:"outside_pct_before"`
	OutsidePctAfter  float64  `json:"outside_pct_after"`
	AwaitMsBefore    *float64 `json:"disk_await_ms_before"`
	AwaitMsAfter     *float64 `json:"disk_await_ms_after"`
}

// NearestDevicePoint is the point of dev that match accepts, without
// errors, whose block size, then outstanding I/Os, are nearest (by ratio)
// to block and outstanding; between two as near, the more outstanding,
// as a share is of what the device can do. ok is false when none is.
func NearestDevicePoint(dev []DevicePoint, match func(DevicePoint) bool, block float64, outstanding int) (DevicePoint, bool) {
	var best DevicePoint
	bestBlock, bestLoad := math.Inf(1), math.Inf(1)
	for _, d := range dev {
		if !match(d) || d.Errors > 0 || d.IOPS <= 0 || d.BlockSize <= 0 || d.OutstandingIOs <= 0 {
			continue
		}
		b := math.Abs(math.Log2(float64(d.BlockSize) / block))
		l := math.Abs(math.Log2(float64(d.OutstandingIOs) / float64(outstanding)))
		if b < bestBlock || b == bestBlock && (l < bestLoad || l == bestLoad && d.OutstandingIOs > best.OutstandingIOs) {
			best, bestBlock, bestLoad = d, b, l
		}
	}
	return best, !math.IsInf(bestBlock, 1)
}

// DevicePoints are the points of the device steps among steps: in a run,
// the steps kept before this one, on the same storage (a study's steps
// share its path).
func DevicePoints(steps []Step) []DevicePoint {
	var dev []DevicePoint
	for _, st := range steps {
		if d, ok := st.Body.(*Device); ok {
			dev = append(dev, d.Points...)
		}
	}
	return dev
}
