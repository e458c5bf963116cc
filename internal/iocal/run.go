package iocal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Env is what a calibration runs with, from the session around it.
type Env struct {
	Prog *progress.Printer
	// Log is the engine's name for its log of changes ("WAL", "redo
	// log"), in the point lines and verdicts; "log" when empty.
	Log string
	// Waits says what the engine's waits mean to the verdicts.
	Waits terms.WaitKinds
	// Edge reads the observers at a window edge and Window returns what
	// they saw between two edges; nil without observers.
	Edge   func() time.Time
	Window func(from, to time.Time) *results.Observe
	// ColdStart restarts the server and drops the OS page cache (reporting
	// whether it could); nil when the server is not calibra's.
	ColdStart func(ctx context.Context) (cacheDropped bool, err error)
	// Limits are the cache and storage limits in force.
	Limits *results.AppliedLimits
	// CacheBytes is the most the caches in force can hold (database cache
	// plus the bounded page cache); CacheUnbounded says why no bound is
	// known when it is zero.
	CacheBytes     int64
	CacheUnbounded string
	// Device are the points of the run's device steps before this one
	// (results.DevicePoints): each point is stated as a share of them.
	Device []results.DevicePoint
	// Point, when set, is told of each point as it starts (p nil) and
	// with its figures once done (--metrics-listen).
	Point func(test string, jobs int, p *results.IOCalPoint)
}

// cacheFactor is how much larger than every cache the data must be for the
// reads to reach the storage: with uniform random reads at most a third
// can then be hits.
const cacheFactor = 3

// Run loads the calibration data (or reuses what --keep left), runs the
// tests asked for, each after a cold start, and drops the data unless
// cfg.Keep. It returns the step's body, with what was measured also when
// it fails or is interrupted.
func Run(ctx context.Context, e engine.Engine, cfg Config, env Env) (*results.IOCal, error) {
	out := &results.IOCal{DataBytes: cfg.SizeBytes, PointS: cfg.Point.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		Limits: env.Limits, Missing: map[string]string{}}
	d, err := Dialects.For(e)
	if err != nil {
		return out, err
	}
	r := &runner{d: d, cfg: cfg, env: env, out: out, lastMBPS: map[string]float64{}}
	err = r.run(ctx)
	missingShares(out, env.Device)
	if cerr := r.cleanup(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if len(out.Missing) == 0 {
		out.Missing = nil
	}
	return out, err
}

type runner struct {
	d     Dialect
	cfg   Config
	env   Env
	out   *results.IOCal
	data  *data
	pool  []Conn
	flush bool // the server can publish statistics on demand
	// lastMBPS is each test's MB/s at its last point, which sizes the
	// next point's chunks.
	lastMBPS map[string]float64
}

func (r *runner) connect(ctx context.Context) (Conn, error) { return r.d.Connect(ctx) }

func (r *runner) run(ctx context.Context) error {
	conn, err := r.connect(ctx)
	if err != nil {
		return err
	}
	blockSize, noFlush, err := conn.Server(ctx)
	if err != nil {
		conn.Close()
		return err
	}
	r.out.BlockSizeBytes, r.flush = blockSize, noFlush == ""
	if m, ok := conn.(IOMethoder); ok {
		if r.out.IOMethod, err = m.IOMethod(ctx); err != nil {
			conn.Close()
			return err
		}
	}
	m := r.d.Methods()
	r.out.ReadMethod, r.out.ClientReadMethod, r.out.SeqReadMethod, r.out.WriteMethod, r.out.CommitMethod = m.Random, m.ClientRead, m.SeqRead, m.SeqWrite, m.Commit
	r.out.ReadsPerCall = r.cfg.ReadsPerCall
	r.cacheVerdict()
	r.data, err = existing(ctx, conn, r.cfg.SizeBytes, blockSize)
	conn.Close()
	if err != nil {
		return err
	}
	if r.data != nil {
		r.env.Prog.Phase("iocal: reusing the calibration data kept by an earlier run (%s)", human(r.cfg.SizeBytes))
		r.out.Notes = append(r.out.Notes, "the calibration data was kept by an earlier run (--keep) and reused")
	} else {
		loaders := max(r.cfg.Loaders, 1)
		r.env.Prog.Phase("iocal: loading %s of calibration data with %d loaders", human(r.cfg.SizeBytes), loaders)
		var took float64
		r.data, took, err = load(ctx, r.connect, r.cfg.SizeBytes, blockSize, loaders, r.cfg.Seed)
		if err != nil {
			return fmt.Errorf("load the calibration data: %w", err)
		}
		r.out.LoadMBPS = ptr(results.Round(float64(r.data.total*int64(blockSize))/1e6/took, 1))
		r.env.Prog.Phase("iocal: loaded %d blocks in %.1f s (%.0f MB/s)", r.data.total, took, *r.out.LoadMBPS)
	}
	r.out.Tables = len(r.data.blocks)
	r.out.DataBytes = r.data.total * int64(blockSize)
	if !r.flush {
		r.out.Notes = append(r.out.Notes, "this server cannot publish statistics on demand ("+noFlush+"): db_hit_pct and dbps may miss up to a second of each point")
	}
	for _, test := range r.cfg.Tests {
		if err := r.runTest(ctx, test); err != nil {
			return err
		}
	}
	return nil
}

// runTest runs one test's sweep, after a cold start for the tests that
// read, and sums it up.
func (r *runner) runTest(ctx context.Context, test string) error {
	if test != TestWAL {
		if err := r.coldStart(ctx, test); err != nil {
			return err
		}
	}
	var err error
	switch test {
	case TestRandom:
		r.out.RandomRead = &results.IOCalRandom{Points: []results.IOCalPoint{}, MaxLatencyMs: r.cfg.MaxLatency.Seconds() * 1000}
		err = r.sweep(ctx, test, &r.out.RandomRead.Points)
		summarise(r.out.RandomRead, "random_read", r.out.Missing)
	case TestClientRead:
		r.out.ClientRead = &results.IOCalRandom{Points: []results.IOCalPoint{}, MaxLatencyMs: r.cfg.MaxLatency.Seconds() * 1000}
		err = r.sweep(ctx, test, &r.out.ClientRead.Points)
		summarise(r.out.ClientRead, "client_read", r.out.Missing)
	case TestSeqRead:
		r.out.SeqRead = &results.IOCalSeq{Points: []results.IOCalPoint{}}
		err = r.sweep(ctx, test, &r.out.SeqRead.Points)
		summariseSeq(r.out.SeqRead, "seq_read", r.out.Missing)
	case TestSeqWrite:
		r.out.SeqWrite = &results.IOCalSeq{Points: []results.IOCalPoint{}}
		if err = r.prepare(ctx, func(c Conn) error { return c.PrepareWrites(ctx, writePool) }); err == nil {
			err = r.sweep(ctx, test, &r.out.SeqWrite.Points)
		}
		summariseSeq(r.out.SeqWrite, "seq_write", r.out.Missing)
	case TestWAL:
		r.out.Commit = &results.IOCalCommit{Points: []results.IOCalPoint{}}
		if err = r.prepare(ctx, func(c Conn) error { return c.PrepareCommits(ctx, commitTable) }); err == nil {
			err = r.sweep(ctx, test, &r.out.Commit.Points)
		}
		summariseCommit(r.out.Commit, r.out.Missing)
	}
	return err
}

// prepare has the first connection create what a test writes with.
func (r *runner) prepare(ctx context.Context, f func(Conn) error) error {
	if err := r.ensurePool(ctx, 1); err != nil {
		return err
	}
	return f(r.pool[0])
}

// cacheVerdict says whether the reads may be served by a cache.
func (r *runner) cacheVerdict() {
	switch {
	case r.env.CacheUnbounded != "":
		r.out.CacheDominated = r.env.CacheUnbounded
	case r.cfg.SizeBytes < cacheFactor*r.env.CacheBytes:
		r.out.CacheDominated = fmt.Sprintf("the calibration data (%s) is less than %d times the caches in force (%s): raise --size",
			human(r.cfg.SizeBytes), cacheFactor, human(r.env.CacheBytes))
	}
	if r.env.ColdStart == nil {
		note := "no cold start between tests (the server is not calibra's): earlier tests warm the caches for later ones"
		if r.out.CacheDominated == "" {
			r.out.CacheDominated = note
		} else {
			r.out.Notes = append(r.out.Notes, note)
		}
	}
}

// coldStart restarts the server with its files out of the page cache, before a test.
func (r *runner) coldStart(ctx context.Context, test string) error {
	if r.env.ColdStart == nil {
		return nil
	}
	r.closePool()
	r.env.Prog.Phase("iocal: %s: cold start (restart, the server's files out of the OS page cache)", test)
	dropped, err := r.env.ColdStart(ctx)
	if err != nil {
		return fmt.Errorf("cold start before %s: %w", test, err)
	}
	r.out.ColdStarts++
	if r.out.Limits != nil {
		r.out.Limits.ColdStart = true
		r.out.Limits.OSCacheDropped = ptr(dropped)
	}
	if !dropped {
		r.out.Missing["limits.os_cache_dropped"] = "some of the server's files could not be evicted from the OS page cache (calibra may not open them): tests start with what the cache holds"
	}
	return nil
}

// ensurePool opens connections until there are n.
func (r *runner) ensurePool(ctx context.Context, n int) error {
	have := len(r.pool)
	if have >= n {
		return nil
	}
	conns := make([]Conn, n-have)
	err := parallel(len(conns), func(i int) error {
		var err error
		conns[i], err = r.connect(ctx)
		return err
	})
	for _, c := range conns {
		if c != nil {
			r.pool = append(r.pool, c)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (r *runner) closePool() {
	for _, c := range r.pool {
		c.Close()
	}
	r.pool = nil
}

// cleanup closes the connections and drops the data unless asked to keep
// it (the write test's tables always go).
func (r *runner) cleanup() error {
	r.closePool()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := r.connect(ctx)
	if err != nil {
		return fmt.Errorf("remove the calibration data: %w", err)
	}
	defer conn.Close()
	if !r.cfg.Keep || r.data == nil {
		return conn.DropSchema(ctx)
	}
	return conn.DropTables(ctx, writePrefix)
}

// job is one parallel job's state over a point.
type job struct {
	id     int
	conn   Conn
	rng    *rand.Rand
	lat    *hist.Histogram
	ops    int64
	units  int64   // reads or commits, where an op holds many
	blocks []int64 // the random test's reusable block list
	bytes  int64
	sum    time.Duration
}

// record adds one op, which took lat, to the job's counts and latencies.
func (j *job) record(d done, lat time.Duration) {
	j.ops++
	j.units += d.units
	j.bytes += d.bytes
	switch {
	case d.lats != nil:
		for _, l := range d.lats {
			j.lat.Record(l)
			j.sum += l
		}
		return
	case d.units > 1:
		j.lat.Record(lat / time.Duration(d.units))
	default:
		j.lat.Record(lat)
	}
	j.sum += lat
}

// op does one unit of a test's work and returns what it did.
type op func(ctx context.Context, j *job) (done, error)

// done is what one op did: the bytes it moved and the reads or commits it
// made (0 where the test counts bytes alone), and each one's latency where
// the server timed them; else the op's time over its units is recorded as
// each one's.
type done struct {
	bytes, units int64
	lats         []time.Duration
}

// sweep runs one test over every job count.
func (r *runner) sweep(ctx context.Context, test string, points *[]results.IOCalPoint) error {
	next := r.opFor(test)
	for i, n := range r.cfg.Jobs {
		if err := r.ensurePool(ctx, n); err != nil {
			return err
		}
		jobs := make([]*job, n)
		for k := range jobs {
			jobs[k] = &job{id: k, conn: r.pool[k], lat: hist.New(),
				rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)<<32|uint64(k)))}
		}
		if r.env.Point != nil {
			r.env.Point(test, n, nil)
		}
		op := next(n)
		if r.cfg.Warmup > 0 {
			r.env.Prog.Status(fmt.Sprintf("iocal: %s %d jobs: warming up", test, n))
			if _, err := r.phase(ctx, jobs, r.cfg.Warmup, op); err != nil {
				return err
			}
			for _, j := range jobs {
				j.ops, j.units, j.bytes, j.sum = 0, 0, 0, 0
				j.lat.Reset()
			}
		}
		from, cpu0 := r.edge(), proc.SelfCPU()
		stop := statusLoop(r.env.Prog, time.Now(), func(d time.Duration) string {
			return fmt.Sprintf("iocal: %s point %d/%d, %d jobs, %s of %s", test, i+1, len(r.cfg.Jobs), n, d.Round(time.Second), r.cfg.Point)
		})
		elapsed, err := r.phase(ctx, jobs, r.cfg.Point, op)
		stop()
		to, cpu1 := r.edge(), proc.SelfCPU()
		if err != nil {
			return err
		}
		p := r.point(test, jobs, elapsed, from, to, cpu1-cpu0)
		r.lastMBPS[test] = p.MBPS
		r.out.Warnings = append(r.out.Warnings, pointWarnings(test, n, samples(jobs), elapsed.Seconds(), r.cfg.Point.Seconds(), meanOp(jobs))...)
		*points = append(*points, p)
		if r.env.Point != nil {
			r.env.Point(test, n, &p)
		}
		r.env.Prog.Phase("iocal: %s", pointLine(test, p, r.logWord()))
	}
	return nil
}

func (r *runner) edge() time.Time {
	if r.env.Edge == nil {
		return time.Now()
	}
	return r.env.Edge()
}

// phase runs op on every job for d, lets each finish the unit in flight,
// has each backend publish its statistics, and returns the time from the
// start until the last job was done.
func (r *runner) phase(ctx context.Context, jobs []*job, d time.Duration, op op) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(d)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t0 := time.Now()
				d, err := op(ctx, j)
				if err != nil {
					if ctx.Err() == nil {
						errs[i] = fmt.Errorf("job %d: %w", j.id, err)
					}
					return
				}
				j.record(d, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return elapsed, ctx.Err()
	}
	if err := errors.Join(errs...); err != nil {
		return elapsed, err
	}
	if r.flush {
		// Counters read at the edge then hold exactly this phase's work.
		err := parallel(len(jobs), func(i int) error {
			return jobs[i].conn.Flush(ctx)
		})
		if err != nil {
			return elapsed, err
		}
	}
	return elapsed, nil
}

// statusLoop redraws a status line every second until stop.
func statusLoop(prog *progress.Printer, start time.Time, line func(time.Duration) string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				prog.Status(line(time.Since(start)))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// DefaultLoaders is the parallel loaders when the study does not say.
func DefaultLoaders() int { return min(runtime.NumCPU(), 8) }

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}
