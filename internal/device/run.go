package device

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// Engines are fio's I/O engines in calibra's order of preference: io_uring
// and libaio keep qd I/Os in flight; psync is synchronous (always depth 1)
// but works everywhere.
var Engines = []string{"io_uring", "libaio", "psync"}

// Config is one sweep.
type Config struct {
	Fio        Fio
	Specs      []Spec
	QDs        []int
	Targets    []Target
	Workers    int   // per target
	Size       int64 // bytes per worker
	Ramp       time.Duration
	Runtime    time.Duration
	Repeats    int
	MaxLatency time.Duration
	Direct     bool
	// P99Bounds are the latency bounds of each spec's "IOPS at p99 ≤ X".
	P99Bounds []time.Duration
	Engine    string // one of Engines, or "" to take the first that works
	Seed      uint64
	// SteadyState preconditions the regions (PTS: twice over in 128 KiB
	// sequential writes) and runs each point in rounds of Runtime until
	// the PTS window criteria hold or MaxRounds are done.
	SteadyState bool
	MaxRounds   int
}

// Env is what a sweep runs with.
type Env struct {
	Group  *proc.Group // owns the fio processes
	Prog   *progress.Printer
	RawDir string // every job file, JSON report and fio log goes here
	// Cgroup, when set, holds fio: the study's storage limits apply to it.
	Cgroup *limits.Cgroup
	// Edge reads the observers at a window edge and Window returns what
	// they saw between two edges, for each point's verdict; nil without
	// observers.
	Edge   func() time.Time
	Window func(from, to time.Time) *results.Observe
	// Point, when set, is told of each point as it starts (p nil) and
	// with its figures once done (--metrics-listen).
	Point func(spec string, qd int, p *results.DevicePoint)
}

func (env Env) point(r Run, p *results.DevicePoint) {
	if env.Point != nil {
		env.Point(r.Spec.Name, r.QD, p)
	}
}

// Sweep probes the I/O engine, writes the test files, runs the sweep and
// returns the step's body: also what was measured when it fails or is
// interrupted. The test files are removed on every path.
func Sweep(ctx context.Context, cfg Config, env Env) (*results.Device, error) {
	out := cfg.header()
	err := measure(ctx, cfg, env, out)
	out.Specs = specResults(cfg.Specs, out.Points, cfg.MaxLatency)
	for i := range out.Specs {
		out.Specs[i].IOPSAtP99 = atBounds(out.Specs[i].Name, out.Points, cfg.P99Bounds)
	}
	if cerr := Cleanup(cfg.Targets); cerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the test files: %w", cerr))
	}
	return out, err
}

func (cfg Config) header() *results.Device {
	out := &results.Device{FioPath: cfg.Fio.Path, FioVersion: cfg.Fio.Version, Direct: cfg.Direct,
		WorkersPerTarget: cfg.Workers, SizeBytes: cfg.Size, RampS: cfg.Ramp.Seconds(), RuntimeS: cfg.Runtime.Seconds(),
		Repeats: cfg.Repeats, Seed: cfg.Seed, LatencyBasis: "clat", Points: []results.DevicePoint{},
		MaxLatencyUs:  float64(cfg.MaxLatency) / float64(time.Microsecond),
		FreshOutOfBox: !cfg.SteadyState, SteadyState: cfg.steadyMethod()}
	for _, b := range cfg.P99Bounds {
		out.P99BoundsUs = append(out.P99BoundsUs, float64(b)/float64(time.Microsecond))
	}
	for _, t := range cfg.Targets {
		dt := results.DeviceTarget{Path: t.Path, Kind: t.Kind, Device: t.Path}
		if t.Kind != KindBlock {
			st := observe.Storage(t.Path)
			dt.FS, dt.Device = st.FS, st.Device
		}
		out.Targets = append(out.Targets, dt)
	}
	if !cfg.Direct {
		out.Notes = append(out.Notes, "buffered I/O (--direct=false): the figures include the page cache")
	}
	if m := out.SteadyState; m != nil {
		out.Notes = append(out.Notes, "steady state without a purge: calibra does not secure-erase; each region is written over instead")
		if m.PreconditionBytes == 0 {
			out.Notes = append(out.Notes, "no preconditioning: the targets may not be written (give --allow-destroy for a file or device)")
		}
	}
	return out
}

func measure(ctx context.Context, cfg Config, env Env, out *results.Device) error {
	engine, err := setup(ctx, cfg, env, out)
	if err != nil {
		return err
	}
	cfg.Engine = engine
	runs := Plan(cfg.Specs, cfg.QDs, cfg.Repeats)
	points := len(runs) / cfg.Repeats
	window := cfg.roundsBudget()
	announce(cfg, env, len(runs), engine)
	if err := prepare(ctx, cfg, env); err != nil {
		return err
	}
	eta := etaEstimate{window: window, left: len(runs)}
	var reps []*Report
	var raw []string
	var wall time.Duration
	var from time.Time
	var burst *results.DeviceBurst
	var hostLimited bool
	var intervals IntervalIOPS
	for _, r := range runs {
		if len(reps) == 0 && env.Edge != nil {
			from = env.Edge()
		}
		env.point(r, nil)
		started := time.Now()
		var phase atomic.Value
		phase.Store("")
		stop := statusLoop(env.Prog, func() string {
			return fmt.Sprintf("device: run %d/%d %s qd %d%s, %s in, about %s left",
				r.Index+1, len(runs), r.Spec.Name, r.QD, phase.Load(), time.Since(started).Round(time.Second), eta.remaining(time.Since(started)).Round(time.Second))
		})
		pr, err := cfg.runPoint(ctx, env, r, func(s string) { phase.Store(", " + s) })
		stop()
		if err != nil {
			return err
		}
		took := time.Since(started)
		eta.done(took)
		reps, raw, wall = append(reps, pr.reps...), append(raw, pr.names...), wall+took
		if pr.logErr != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("IOPS per second not read, so no burst judged: %v", pr.logErr))
		}
		// The first repeat whose rate fell, a burst before a host's fall.
		if b, host := burstResult(pr, r.Spec.BlockSize); b != nil && (burst == nil || hostLimited && !host) {
			burst, hostLimited = b, host
		}
		intervals.Append(pr.intervals)
		if r.Repeat < r.Repeats {
			continue
		}
		p := point(r.Spec, r.QD, cfg.Workers*len(cfg.Targets), reps)
		p.WallS, p.Raw, p.FreshOutOfBox = round(wall.Seconds(), 3), raw, !cfg.SteadyState
		if hostLimited {
			p.HostLimitedFall = burst
		} else {
			p.Burst = burst
		}
		p.IOPSPerS = rounded(intervals.All)
		if r.Spec.Writes() {
			p.WriteIOPSPerS = rounded(intervals.Writes)
		}
		if pr.steady != nil { // the window's rounds are one run, not repeats
			p.Repeats, p.Spread, p.SteadyState = 1, nil, pr.steady
		}
		if env.Edge != nil && env.Window != nil {
			// fio's own CPU is the workload's, not a driver's to discount.
			p.LimitedBy, p.LimitedByEvidence = verdict.DecideWith(env.Window(from, env.Edge()), nil, verdict.Options{Nearest: true})
		}
		out.Points = append(out.Points, p)
		env.point(r, &p)
		env.Prog.Phase("device: point %d/%d %s", r.Point+1, points, pointLine(p))
		reps, raw, wall, burst, hostLimited, intervals = nil, nil, 0, nil, false, IntervalIOPS{}
	}
	return ioErrors(out.Points)
}

// setup makes the test directories, finds the ioengine and says what it
// implies.
func setup(ctx context.Context, cfg Config, env Env, out *results.Device) (string, error) {
	for _, t := range cfg.Targets {
		if t.Kind == KindDir {
			if err := t.makeWorkerFiles(cfg.Workers); err != nil {
				return "", err
			}
		}
	}
	engine, err := probe(ctx, cfg, env, out)
	if err != nil {
		return "", err
	}
	out.IOEngine = engine
	if engine == "psync" && slices.Max(cfg.QDs) > 1 {
		out.Notes = append(out.Notes, "ioengine psync is synchronous: every queue depth above 1 ran at depth 1; raise --workers for concurrency")
	}
	if engine == "libaio" && !cfg.Direct {
		out.Notes = append(out.Notes, "ioengine libaio is synchronous for buffered I/O: queue depths above 1 add little")
	}
	for _, n := range out.Notes {
		env.Prog.Phase("device: note: %s", n)
	}
	return engine, nil
}

// ioErrors is the sweep's error when fio counted I/O errors.
func ioErrors(points []results.DevicePoint) error {
	var errs, bad int64
	for _, p := range points {
		if p.Errors > 0 {
			errs += p.Errors
			bad++
		}
	}
	if errs > 0 {
		return fmt.Errorf("fio counted %d I/O errors in %d of %d points; see the fio logs under raw/", errs, bad, len(points))
	}
	return nil
}

// announce says what the sweep will do and about how long it takes: with
// steady state, at most that long.
func announce(cfg Config, env Env, runs int, engine string) {
	names := make([]string, len(cfg.Specs))
	for i, sp := range cfg.Specs {
		names[i] = sp.Name
	}
	qds := make([]string, len(cfg.QDs))
	for i, qd := range cfg.QDs {
		qds[i] = strconv.Itoa(qd)
	}
	each := "1 run"
	if cfg.Repeats > 1 {
		each = fmt.Sprintf("%d runs", cfg.Repeats)
	}
	each += fmt.Sprintf(" each of %s ramp + %s", cfg.Ramp, cfg.Runtime)
	about := "about"
	if cfg.SteadyState {
		each = fmt.Sprintf("%s ramp then rounds of %s each until steady state (at most %d rounds)", cfg.Ramp, cfg.Runtime, cfg.MaxRounds)
		about = "at most"
	}
	env.Prog.Phase("device: %d points (%s at qd %s), %s, %s %s; ioengine %s, %s",
		runs/cfg.Repeats, strings.Join(names, ", "), strings.Join(qds, ","), each, about,
		(time.Duration(runs) * (cfg.roundsBudget() + time.Second/2)).Round(time.Second), engine, IOMode(cfg.Direct))
}

// job is the fio job of one run of the sweep.
func (cfg Config) job(r Run) Job {
	return Job{
		Title:  fmt.Sprintf("calibra device: %s at queue depth %d, run %d", r.Spec.Name, r.QD, r.Index+1),
		Engine: cfg.Engine, Direct: cfg.Direct, Spec: r.Spec, QD: r.QD,
		Ramp: cfg.Ramp, Runtime: cfg.Runtime, Seed: cfg.Seed + uint64(r.Index),
		Size: cfg.Size, Workers: cfg.Workers, Targets: cfg.Targets,
	}
}

// IOMode names direct or buffered I/O.
func IOMode(direct bool) string {
	if direct {
		return "direct I/O"
	}
	return "buffered I/O"
}

// probe finds the first engine (or checks the one asked for) that can do a
// few reads at depth 2 on the first target, with the sweep's direct flag:
// io_uring may be missing from the kernel or blocked by a container's
// seccomp profile, libaio may not be built into fio.
func probe(ctx context.Context, cfg Config, env Env, out *results.Device) (string, error) {
	engines := Engines
	if cfg.Engine != "" {
		engines = []string{cfg.Engine}
	}
	t := cfg.Targets[0]
	var reasons []string
	for _, e := range engines {
		job := Job{Title: "calibra device: can ioengine " + e + " read here?", Engine: e, Direct: cfg.Direct,
			Spec: Spec{Name: "probe", BlockSize: 4 << 10, ReadPct: 100, Align: 4 << 10}, QD: 2,
			Seed: cfg.Seed, Size: min(64<<10, cfg.Size), Workers: 1, Targets: []Target{t}}
		rep, err := cfg.Fio.run(ctx, env, "probe-"+e, job)
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			reasons = append(reasons, fmt.Sprintf("%s: %v", e, err))
		case rep.ErrNo != 0:
			reasons = append(reasons, e+":"+errnoSuffix(rep.ErrNo))
		case rep.Read.IOs == 0:
			reasons = append(reasons, e+": no I/O completed")
		default:
			if len(reasons) > 0 {
				out.Notes = append(out.Notes, fmt.Sprintf("ioengine %s chosen because %s", e, strings.Join(reasons, "; ")))
			}
			return e, nil
		}
	}
	return "", fmt.Errorf("no fio ioengine could read %s: %s", t.Path, strings.Join(reasons, "; "))
}

// prepare writes every worker's region once before the sweep, so that reads
// hit written blocks: a file system returns holes and unwritten extents
// without touching the device, and a thin or fresh SSD does the same for
// blocks never written. It ends with an fsync, so that no write-back of
// its data spills into the first point.
func prepare(ctx context.Context, cfg Config, env Env) error {
	var targets []Target
	for _, t := range cfg.Targets {
		if t.writable() {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	bs := gcd(cfg.Size, 1<<20)
	job := Job{Title: "calibra device: write each worker's region once, so that reads hit written blocks",
		Engine: cfg.Engine, Direct: cfg.Direct, Spec: Spec{Name: "prepare", BlockSize: bs, Align: bs}, QD: 8, Fsync: true,
		Seed: cfg.Seed, Size: cfg.Size, Workers: cfg.Workers, Targets: targets}
	what := "writing the test regions (%d x %s) so that reads hit written blocks"
	if cfg.SteadyState {
		// PTS workload-independent preconditioning: twice the region in
		// 128 KiB sequential writes.
		bs = cfg.preconditionBlock()
		job.Title = fmt.Sprintf("calibra device: precondition each worker's region, %d times over in %s sequential writes", preconditionPasses, FormatSize(bs))
		job.Spec, job.QD, job.Loops = Spec{Name: "precondition", BlockSize: bs, Align: bs}, preconditionQD, preconditionPasses
		what = fmt.Sprintf("preconditioning the test regions (%%d x %%s, %d times over in %s sequential writes)", preconditionPasses, FormatSize(bs))
	}
	env.Prog.Phase("device: "+what, cfg.Workers*len(targets), FormatSize(cfg.Size))
	started := time.Now()
	stop := statusLoop(env.Prog, func() string {
		return fmt.Sprintf("device: writing the test regions, %s in", time.Since(started).Round(time.Second))
	})
	rep, err := cfg.Fio.run(ctx, env, "prepare", job)
	stop()
	if err != nil {
		return err
	}
	if rep.Errors > 0 {
		return fmt.Errorf("writing the test regions hit %d I/O errors%s; see raw/prepare.log", rep.Errors, errnoSuffix(rep.ErrNo))
	}
	return nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// point sums up the repeats of one spec at one queue depth: IOPS and MB/s
// are their means; latency comes from their merged histograms.
func point(s Spec, qd, workers int, reps []*Report) results.DevicePoint {
	p := results.DevicePoint{Spec: s.Name, BlockSize: s.BlockSize, ReadPct: s.ReadPct, RandomPct: s.RandomPct,
		QD: qd, Workers: workers, OutstandingIOs: workers * qd, Repeats: len(reps)}
	n := float64(len(reps))
	var read, write, all Hist
	var readIOPS, writeIOPS, readBps, writeBps float64
	iops := make([]float64, len(reps))
	p99 := make([]float64, len(reps))
	for i, r := range reps {
		iops[i] = r.Read.IOPS + r.Write.IOPS
		readIOPS += r.Read.IOPS / n
		writeIOPS += r.Write.IOPS / n
		readBps += r.Read.BytesPerS / n
		writeBps += r.Write.BytesPerS / n
		read.Add(r.Read.Clat)
		write.Add(r.Write.Clat)
		var one Hist
		one.Add(r.Read.Clat)
		one.Add(r.Write.Clat)
		p99[i] = one.Percentiles(99)[0] / 1e3
		p.Errors += r.Errors
		if p.ErrNo == 0 {
			p.ErrNo = r.ErrNo
		}
	}
	all.Add(read)
	all.Add(write)
	p.IOPS = round(readIOPS+writeIOPS, 2)
	p.MBps = round((readBps+writeBps)/1e6, 3)
	p.LatUs = latencyUs(all)
	if read.N > 0 && write.N > 0 {
		p.Read = &results.DeviceDirection{IOPS: round(readIOPS, 2), MBps: round(readBps/1e6, 3), LatUs: latencyUs(read)}
		p.Write = &results.DeviceDirection{IOPS: round(writeIOPS, 2), MBps: round(writeBps/1e6, 3), LatUs: latencyUs(write)}
	}
	if len(reps) > 1 {
		p.Spread = &results.DeviceSpread{IOPSMin: round(slices.Min(iops), 2), IOPSMax: round(slices.Max(iops), 2),
			IOPSStddev: round(stddev(iops), 2), P99UsMin: round(slices.Min(p99), 3), P99UsMax: round(slices.Max(p99), 3)}
	}
	return p
}

// latencyUs reads a histogram in nanoseconds as microseconds; nil when no
// I/O completed.
func latencyUs(h Hist) *results.DeviceLatency {
	if h.N == 0 {
		return nil
	}
	ps := h.Percentiles(50, 99, 99.9, 99.99)
	p9999 := round(ps[3]/1e3, 3)
	return &results.DeviceLatency{Mean: round(h.Mean()/1e3, 3), P50: round(ps[0]/1e3, 3),
		P99: round(ps[1]/1e3, 3), P999: round(ps[2]/1e3, 3), P9999: &p9999, Max: round(h.Max/1e3, 3)}
}

func stddev(xs []float64) float64 {
	mean := 0.0
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// rounded is xs to 2 places, nil when empty.
func rounded(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, round(x, 2))
	}
	return out
}

func round(x float64, places int) float64 {
	f := math.Pow(10, float64(places))
	return math.Round(x*f) / f
}

// specResults answers, per spec, "how many IOPS within the latency bound?":
// the error-free point with the highest IOPS whose p99 is at or under it.
func specResults(specs []Spec, points []results.DevicePoint, bound time.Duration) []results.DeviceSpec {
	boundUs := float64(bound) / float64(time.Microsecond)
	var out []results.DeviceSpec
	for _, s := range specs {
		ds := results.DeviceSpec{Name: s.Name, BlockSize: s.BlockSize, ReadPct: s.ReadPct, RandomPct: s.RandomPct, AlignBytes: s.Align,
			JudgedOn: "p99_bound"}
		// A sequential spec is about throughput: a p99 bound meant for
		// random I/O would reject its large, deep-queued transfers.
		sequential := s.RandomPct == 0
		if sequential {
			ds.JudgedOn = "mbps"
		}
		var best, lowest *results.DevicePoint
		measured := 0
		for i := range points {
			p := &points[i]
			if p.Spec != s.Name {
				continue
			}
			measured++
			if p.Errors > 0 || p.LatUs == nil {
				continue
			}
			if lowest == nil || p.LatUs.P99 < lowest.LatUs.P99 {
				lowest = p
			}
			switch {
			case sequential:
				if best == nil || p.MBps > best.MBps {
					best = p
				}
			case p.LatUs.P99 <= boundUs && (best == nil || p.IOPS > best.IOPS):
				best = p
			}
		}
		switch {
		case best != nil:
			ds.AtMaxLatency = &results.DeviceBest{QD: best.QD, IOPS: best.IOPS, MBps: best.MBps, P99Us: best.LatUs.P99,
				LimitedBy: best.LimitedBy, LimitedByEvidence: best.LimitedByEvidence}
		case measured == 0:
			ds.AtMaxLatencyMissing = "not measured: the sweep stopped before a point of this spec was done"
		case lowest == nil:
			ds.AtMaxLatencyMissing = "every point of this spec had I/O errors"
		default:
			ds.AtMaxLatencyMissing = fmt.Sprintf("no queue depth kept p99 at or under %s (the lowest p99 was %s at qd %d)",
				bound, FormatMicros(lowest.LatUs.P99), lowest.QD)
		}
		out = append(out, ds)
	}
	return out
}

// pointLine is a point in one line, for progress and summaries.
func pointLine(p results.DevicePoint) string {
	line := fmt.Sprintf("%s qd %d: %.0f IOPS, %.1f MB/s", p.Spec, p.QD, p.IOPS, p.MBps)
	if p.LatUs != nil {
		line += fmt.Sprintf(", p99 %s", FormatMicros(p.LatUs.P99))
	}
	if p.Errors > 0 {
		line += fmt.Sprintf(", %d errors%s", p.Errors, errnoSuffix(p.ErrNo))
	}
	return line
}

// FormatMicros writes a latency in microseconds for people.
func FormatMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%.2f s", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%.2f ms", us/1e3)
	case us >= 10:
		return fmt.Sprintf("%.0f µs", us)
	default:
		return fmt.Sprintf("%.1f µs", us)
	}
}

// etaEstimate predicts the time left: the runs to go, each a window plus
// the start-up overhead measured so far.
type etaEstimate struct {
	window   time.Duration
	left     int
	overhead time.Duration // mean wall time beyond the window
	finished int
}

func (e *etaEstimate) done(took time.Duration) {
	e.overhead = (e.overhead*time.Duration(e.finished) + max(took-e.window, 0)) / time.Duration(e.finished+1)
	e.finished++
	e.left--
}

// remaining is the time left while the current run has been going for elapsed.
func (e *etaEstimate) remaining(elapsed time.Duration) time.Duration {
	return max(time.Duration(e.left)*(e.window+e.overhead)-elapsed, 0)
}

// statusLoop redraws a status line every second until the returned stop;
// work shorter than a second shows none.
func statusLoop(prog *progress.Printer, line func() string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				prog.Status(line())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
