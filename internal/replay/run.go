// Package replay drives a profile (internal/profile) through a database on
// the storage under test: random page reads issued by the server (iocal's
// random test), commits carrying the profile's WAL bytes each (a paced
// server-side loop), at the profile's concurrency, open-loop at the
// profile's rates; first at 1x, then at multiples of it until a latency
// SLA breaks. docs/profile.md says how and how faithfully.
package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/profile"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// Config is one replay.
type Config struct {
	Profile *profile.Profile
	File    string // where the profile came from, for results.json
	// Scale sizes the data against the profile's database.
	Scale          float64
	SLA            SLA
	Window, Warmup time.Duration
	// MaxMultiple is the most the stepping asks of the profile.
	MaxMultiple float64
	Seed        uint64
	Loaders     int
}

// Env is what a replay runs with, from the session around it.
type Env struct {
	Prog *progress.Printer
	Log  string // the engine's word for its log of changes
	// Edge and Window are the session's observers; nil without them.
	Edge   func() time.Time
	Window func(from, to time.Time) *results.Observe
}

const (
	// MinDataBytes is the least data the replay reads from.
	MinDataBytes = 64 << 20
	// A reader makes at most this many calls a second: more reads a
	// second go into each call, so calibra stays off the read path.
	callsPerReader = 50
	// A committer's call covers this much of its schedule.
	commitCall = 100 * time.Millisecond
	// attain is the share of its asked rates a multiple must do.
	attain = 0.85
	// maxWidth bounds a commit's payload (the pool is 1 MiB).
	maxWidth = 512 << 10
	// MaxWorkers bounds the readers and the committers each.
	MaxWorkers = 64
	// fractions is how far below 1x the replay looks for what holds.
	fractions = 4
)

// Run loads the data, calibrates the replay at 1x over the warmup, then
// runs each multiple; it returns the step's body, with what was measured
// also when it fails.
func Run(ctx context.Context, e engine.Engine, cfg Config, env Env) (*results.Replay, error) {
	p := cfg.Profile
	out := &results.Replay{Scale: cfg.Scale, WindowS: cfg.Window.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		SLA:           results.ReplaySLA{ReadP99Ms: ms(cfg.SLA.ReadP99), CommitP99Ms: ms(cfg.SLA.CommitP99)},
		Profile:       results.ReplayProfile{File: cfg.File, Engine: p.Captured.Engine, ServerVersion: p.Captured.Version, CapturedAt: p.Captured.At.Format(time.RFC3339), DurationS: p.Captured.DurationS},
		CannotCapture: p.CannotCapture, Missing: map[string]string{}}
	pdl, err := profile.Dialects.For(e)
	if err != nil {
		return out, err
	}
	rdl, err := Dialects.For(e)
	if err != nil {
		return out, err
	}
	out.CommitMethod = rdl.Method()
	out.ReadMethod = "iocal's random test: each call has the server read a batch of uniformly random blocks of the data in one query (docs/iocal.md), a call due every interval of the reader's schedule"
	size := max(MinDataBytes, int64(float64(p.Shape.DataBytes)*cfg.Scale))
	env.Prog.Phase("replay: loading %d MiB of data (the profile's database%s)", size>>20, scaleWords(cfg.Scale))
	data, err := iocal.LoadData(ctx, e, size, cfg.Loaders, cfg.Seed)
	if err != nil {
		return out, fmt.Errorf("load the replay's data: %w", err)
	}
	out.DataBytes = data.Bytes()
	r := &runner{cfg: cfg, env: env, data: data, rdl: rdl}
	defer r.cleanup()
	if r.counters, err = pdl.Connect(ctx); err != nil {
		return out, err
	}
	if err := r.ensure(ctx, 0, 1); err != nil {
		return out, err
	}
	if err := r.committers[0].Prepare(ctx); err != nil {
		return out, fmt.Errorf("prepare the replay's commits: %w", err)
	}
	err = r.steps(ctx, out)
	summarise(out, p)
	if len(out.Missing) == 0 {
		out.Missing = nil
	}
	return out, err
}

type runner struct {
	cfg        Config
	env        Env
	data       *iocal.Data
	rdl        Dialect
	counters   profile.Conn
	readers    []iocal.Conn
	committers []Conn
	// readGain turns the profile's page reads into reads asked of the
	// server (some are cache hits), commitGain its commits into commits
	// asked (the server also counts each read call and CALL as one), and
	// width is a commit's payload: all set by the calibration at 1x.
	readGain, commitGain float64
	width                int
	// phases counts the phases run: each reads other blocks than the
	// last, or the blocks it read would be cache hits.
	phases uint64
}

// load is what one phase asks.
type load struct {
	mult                float64
	readsPS, commitsPS  float64
	readers, committers int
}

func (r *runner) loadAt(mult float64) load {
	p := r.cfg.Profile
	n := min(MaxWorkers, max(1, int(math.Ceil(p.Shape.Concurrency*mult))))
	l := load{mult: mult, readsPS: p.Rates.PageReadsPS * mult * r.readGain, commitsPS: p.Rates.CommitsPS * mult * r.commitGain}
	if l.readsPS > 0 {
		l.readers = n
	}
	if l.commitsPS > 0 {
		l.committers = n
	}
	return l
}

// batch is the blocks a reader's call reads.
func (l load) batch() int {
	return max(1, int(math.Ceil(l.readsPS/float64(l.readers*callsPerReader))))
}

// steps calibrates at 1x, then runs 1x and up while the SLA holds, or
// down from 1x until it holds.
func (r *runner) steps(ctx context.Context, out *results.Replay) error {
	p := r.cfg.Profile
	r.readGain, r.commitGain, r.width = 1, 1, max(0, int(p.Shape.WALBytesPerCommit)-walOverhead)
	for range calibrations {
		if r.cfg.Warmup <= 0 {
			break
		}
		r.env.Prog.Phase("replay: calibrating at 1x for %s", r.cfg.Warmup/calibrations)
		l := r.loadAt(1)
		m, err := r.phase(ctx, l, 0, r.cfg.Warmup/calibrations)
		if err != nil {
			return err
		}
		r.calibrate(m, l)
	}
	up := true
	for mult := 1.0; ; {
		st, err := r.step(ctx, mult)
		if err != nil {
			return err
		}
		out.Steps = append(out.Steps, st)
		switch {
		case mult == 1 && !st.WithinSLA:
			up = false
		case up && !st.WithinSLA, !up && st.WithinSLA:
			return nil
		}
		if up {
			if mult *= 2; mult > r.cfg.MaxMultiple {
				return nil
			}
		} else if mult /= 2; mult < 1/math.Pow(2, fractions) {
			return nil
		}
	}
}

// calibrations are the rounds of calibration at 1x, each a share of the
// warmup: the second corrects what the first's changes did to each other.
const calibrations = 2

// walOverhead is about the WAL a commit of one small row writes beside its
// payload (PostgreSQL: the insert's and the commit's records); the
// calibration corrects it.
const walOverhead = 100

// calibrate sets the gains and the payload from what 1x did: the
// server's own counters against the profile's. A gain corrects what the
// server counts of what the driver did, so it is left alone where the
// driver fell behind its schedule: the storage's shortfall, which 1x is
// there to show (on the lab's hdd the commit gain went to its bound of 2,
// and 1x asked twice the profile's commits).
func (r *runner) calibrate(m measured, l load) {
	p := r.cfg.Profile
	if got := m.w.Rates.PageReadsPS; got > 0 && p.Rates.PageReadsPS > 0 && m.keptUp(m.readsDone, l.readsPS) {
		r.readGain = min(20, r.readGain*clampStep(p.Rates.PageReadsPS/got))
	}
	if got := m.w.Rates.CommitsPS; got > 0 && p.Rates.CommitsPS > 0 && m.keptUp(m.commitsDone, l.commitsPS) {
		r.commitGain = min(2, max(0.1, r.commitGain*clampStep(p.Rates.CommitsPS/got)))
	}
	if got := m.w.WALPerCommit; got != nil && p.Shape.WALBytesPerCommit > 0 {
		r.width = nextWidth(r.width, *got, p.Shape.WALBytesPerCommit)
	}
	r.env.Prog.Phase("replay: calibrated: %.2f reads and %.2f commits asked a counted one, %d payload bytes a commit", r.readGain, r.commitGain, r.width)
}

// nextWidth is the payload that should make a commit's WAL the profile's,
// from what width made: the payload's share of the WAL scaled by what is
// missing, as an engine may log a payload more than once (MariaDB logs an
// updated blob's new page and its undo, some 2 bytes a byte: width 5,939
// wrote 12,345 a commit, and an additive correction swung between 0 and
// twice the profile's); the overhead alone when no payload was sent.
func nextWidth(width int, got, want float64) int {
	next := float64(width) + want - got
	if width > 0 && got > walOverhead {
		next = float64(width) * (want - walOverhead) / (got - walOverhead)
	}
	return min(maxWidth, max(0, int(math.Round(next))))
}

// keptUp says whether the driver finished, in the window, at least 95% of
// the operations due in it at rate a second: those due in it but finished
// after its edge are not in the server's count over it (beside a busy
// loop, PostgreSQL's paced commits ran late, the server counted half the
// profile's, and a gain raised to its bound made 1x ask 2.7 times them).
func (m measured) keptUp(done int64, rate float64) bool {
	return float64(done) >= 0.95*rate*m.secs
}

// clampStep bounds one calibration's change, so that a short window's
// noise cannot throw the replay far off.
func clampStep(f float64) float64 { return min(4, max(0.25, f)) }

// step runs one multiple after a warmup and judges it by the SLA.
func (r *runner) step(ctx context.Context, mult float64) (results.ReplayStep, error) {
	l := r.loadAt(mult)
	p := r.cfg.Profile
	r.env.Prog.Phase("replay: %gx the profile: %d readers, %d committers, %.0f page reads/s and %.0f commits/s asked", mult, l.readers, l.committers, p.Rates.PageReadsPS*mult, p.Rates.CommitsPS*mult)
	m, err := r.phase(ctx, l, r.cfg.Warmup, r.cfg.Window)
	st := results.ReplayStep{Multiple: mult, Seconds: results.Round(m.secs, 3), Readers: l.readers, Committers: l.committers,
		AskedPageReadsPS: results.Round(p.Rates.PageReadsPS*mult, 1), AskedCommitsPS: results.Round(p.Rates.CommitsPS*mult, 1),
		PageReadsPS: m.w.Rates.PageReadsPS, PageWritesPS: m.w.Rates.PageWritesPS, CommitsPS: m.w.Rates.CommitsPS,
		WALBytesPS: float64(m.w.Rates.WALBytesPS), WALSyncsPS: m.w.Rates.WALSyncsPS, CacheHitPct: m.w.HitPct, WALBytesPerCommit: m.w.WALPerCommit,
		Concurrency: results.Round(m.active, 2), DriverCPUPct: results.Round(m.driver, 2)}
	if err != nil {
		return st, err
	}
	if m.reads.Count() > 0 {
		st.ReadLatMs = &results.ReplayLatency{P50: m.reads.QuantileMs(50), P99: m.reads.QuantileMs(99)}
	}
	if m.commits.Count() > 0 {
		st.CommitLatMs = &results.ReplayLatency{P50: m.commits.QuantileMs(50), P99: m.commits.QuantileMs(99)}
	}
	if o := m.obs; o != nil {
		st.CPUBusyPct = o.CPUBusyPct
		if o.Disk != nil {
			st.DiskUtilPct, st.DiskRAwaitMs, st.DiskWAwaitMs = o.Disk.UtilPct, o.Disk.RAwaitMs, o.Disk.WAwaitMs
		}
		st.LimitedBy, st.LimitedByEvidence = verdict.DecideWith(o, &st.DriverCPUPct, verdict.Options{ServerSide: true, Nearest: true, Log: r.env.Log})
	}
	st.Broke = r.broke(st)
	st.WithinSLA = st.Broke == ""
	line := fmt.Sprintf("replay: %gx: %.0f page reads/s, %.0f commits/s", mult, st.PageReadsPS, st.CommitsPS)
	if st.ReadLatMs != nil {
		line += fmt.Sprintf(", read p99 %.2f ms", st.ReadLatMs.P99)
	}
	if st.CommitLatMs != nil {
		line += fmt.Sprintf(", commit p99 %.2f ms", st.CommitLatMs.P99)
	}
	if st.WithinSLA {
		r.env.Prog.Phase("%s: within the SLA", line)
	} else {
		r.env.Prog.Phase("%s: broke: %s", line, st.Broke)
	}
	return st, nil
}

// broke says what of the SLA a multiple broke, "" when it held: a p99
// over its bound, or a rate short of what was asked.
func (r *runner) broke(st results.ReplayStep) string {
	var why []string
	if l := st.ReadLatMs; l != nil && l.P99 > ms(r.cfg.SLA.ReadP99) {
		why = append(why, fmt.Sprintf("read p99 %.2f ms > %.2f ms", l.P99, ms(r.cfg.SLA.ReadP99)))
	}
	if l := st.CommitLatMs; l != nil && l.P99 > ms(r.cfg.SLA.CommitP99) {
		why = append(why, fmt.Sprintf("commit p99 %.2f ms > %.2f ms", l.P99, ms(r.cfg.SLA.CommitP99)))
	}
	for _, f := range []struct {
		what       string
		got, asked float64
		timed      bool
	}{{"page reads", st.PageReadsPS, st.AskedPageReadsPS, st.ReadLatMs != nil}, {"commits", st.CommitsPS, st.AskedCommitsPS, st.CommitLatMs != nil}} {
		if f.asked > 0 && f.got < attain*f.asked {
			why = append(why, fmt.Sprintf("%s %.0f/s of %.0f/s asked (%.0f%%)", f.what, f.got, f.asked, 100*f.got/f.asked))
		}
		// The latencies are those of the operations due in the window: a
		// driver behind by more than the window made none of them, and
		// has no latency to judge (the lab's hdd at 1x).
		if f.asked > 0 && !f.timed {
			why = append(why, fmt.Sprintf("none of the %s due in the window was made in it (the driver was further behind than the window)", f.what))
		}
	}
	return joinWords(why)
}

// measured is what a phase's window saw.
type measured struct {
	w              profile.Window
	secs           float64
	reads, commits *hist.Histogram
	// readsDone and commitsDone are the page reads and the commits the
	// driver finished between the window's edges, whenever due.
	readsDone, commitsDone int64
	active                 float64
	driver                 float64 // calibra's CPU, % of the machine
	obs                    *results.Observe
}

// phase drives l open-loop for warm, then measures it over win: the
// counters at the window's edges, the latencies of the operations due in
// it, the active sessions sampled in it.
func (r *runner) phase(ctx context.Context, l load, warm, win time.Duration) (measured, error) {
	m := measured{reads: hist.New(), commits: hist.New()}
	var readsDone, commitsDone atomic.Int64
	if err := r.ensure(ctx, l.readers, l.committers); err != nil {
		return m, err
	}
	r.phases++
	t0 := time.Now().Add(20 * time.Millisecond)
	s := schedule{t0: t0, from: t0.Add(warm), to: t0.Add(warm + win)}
	errs := make([]error, l.readers+l.committers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for j := range l.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hist.New()
			errs[j] = r.read(ctx, j, l, s, h, &readsDone)
			mu.Lock()
			m.reads.Merge(h)
			mu.Unlock()
		}()
	}
	for j := range l.committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := hist.New()
			errs[l.readers+j] = r.commit(ctx, j, l, s, h, &commitsDone)
			mu.Lock()
			m.commits.Merge(h)
			mu.Unlock()
		}()
	}
	a, edge0, cpu0, err := r.edge(ctx, s.from)
	var samples, active int
	for next := time.Now().Add(profile.SampleGap()); err == nil && next.Before(s.to); next = time.Now().Add(profile.SampleGap()) {
		if err = SleepUntil(ctx, next); err == nil {
			var n int
			if n, err = r.counters.Active(ctx); err == nil {
				samples, active = samples+1, active+n
			}
		}
	}
	var b profile.Counters
	var edge1 time.Time
	var cpu1 time.Duration
	if err == nil {
		b, edge1, cpu1, err = r.edge(ctx, s.to)
	}
	wg.Wait()
	if err = errors.Join(append(errs, err)...); err != nil {
		return m, err
	}
	m.secs = edge1.Sub(edge0).Seconds()
	m.readsDone, m.commitsDone = readsDone.Load(), commitsDone.Load()
	m.w = profile.Between(a, b, m.secs)
	m.driver = 100 * (cpu1 - cpu0).Seconds() / (m.secs * float64(runtime.NumCPU()))
	if samples > 0 {
		m.active = float64(active) / float64(samples)
	}
	if r.env.Window != nil {
		m.obs = r.env.Window(edge0, edge1)
	}
	return m, nil
}

// edge waits until at, then reads the counters, the observers and
// calibra's CPU there.
func (r *runner) edge(ctx context.Context, at time.Time) (profile.Counters, time.Time, time.Duration, error) {
	if err := SleepUntil(ctx, at); err != nil {
		return profile.Counters{}, at, 0, err
	}
	now := time.Now()
	if r.env.Edge != nil {
		now = r.env.Edge()
	}
	c, err := r.counters.Counters(ctx)
	return c, now, proc.SelfCPU(), err
}

// schedule is a phase's times: its start, and its window's edges.
type schedule struct{ t0, from, to time.Time }

// inWindow says whether t is between the window's edges.
func (s schedule) inWindow(t time.Time) bool { return !t.Before(s.from) && !t.After(s.to) }

// read is reader j's schedule: a call of batch reads due every interval,
// offset so the readers' calls interleave. A read's latency is its call's
// lateness (start after due) plus the call's time a block.
func (r *runner) read(ctx context.Context, j int, l load, s schedule, h *hist.Histogram, done *atomic.Int64) error {
	batch := l.batch()
	every := time.Duration(float64(l.readers*batch) / l.readsPS * float64(time.Second))
	rng := rand.New(rand.NewPCG(r.cfg.Seed, r.phases<<32|uint64(j)))
	blocks := make([]int64, batch)
	conn := r.readers[j]
	for i := 0; ; i++ {
		due := s.t0.Add(every*time.Duration(j)/time.Duration(l.readers) + every*time.Duration(i))
		if !due.Before(s.to) || !time.Now().Before(s.to) {
			return nil
		}
		if err := SleepUntil(ctx, due); err != nil {
			return err
		}
		start := time.Now()
		if _, err := r.data.ReadRandom(ctx, conn, rng, blocks); err != nil {
			return fmt.Errorf("reader %d: %w", j, err)
		}
		end := time.Now()
		if !due.Before(s.from) {
			h.Record(start.Sub(due) + end.Sub(start)/time.Duration(batch))
		}
		if s.inWindow(end) {
			done.Add(int64(batch))
		}
	}
}

// commit is committer j's schedule, a call of the server's paced loop
// covering commitCall of it at a time.
func (r *runner) commit(ctx context.Context, j int, l load, s schedule, h *hist.Histogram, done *atomic.Int64) error {
	every := time.Duration(float64(l.committers) / l.commitsPS * float64(time.Second))
	per := max(1, int(commitCall/every))
	conn := r.committers[j]
	for i := 0; ; i += per {
		due := s.t0.Add(every*time.Duration(j)/time.Duration(l.committers) + every*time.Duration(i))
		if !due.Before(s.to) || !time.Now().Before(s.to) {
			return nil
		}
		n := min(per, int(math.Ceil(float64(s.to.Sub(due))/float64(every))))
		lats, err := conn.Commits(ctx, j, int64(i)+int64(l.mult*1e9), n, due, every, r.width)
		if err != nil {
			return fmt.Errorf("committer %d: %w", j, err)
		}
		for k, lat := range lats {
			dueK := due.Add(every * time.Duration(k))
			if !dueK.Before(s.from) {
				h.Record(lat)
			}
			if s.inWindow(dueK.Add(lat)) {
				done.Add(1)
			}
		}
	}
}

// ensure opens readers and committers until there are as many as asked.
func (r *runner) ensure(ctx context.Context, readers, committers int) error {
	for len(r.readers) < readers {
		c, err := r.data.Connect(ctx)
		if err != nil {
			return err
		}
		r.readers = append(r.readers, c)
	}
	for len(r.committers) < committers {
		c, err := r.rdl.Connect(ctx)
		if err != nil {
			return err
		}
		r.committers = append(r.committers, c)
	}
	return nil
}

// cleanup closes every session and drops the replay's data and tables.
func (r *runner) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, c := range r.readers {
		c.Close()
	}
	if len(r.committers) > 0 {
		_ = r.committers[0].Drop(ctx)
	}
	for _, c := range r.committers {
		c.Close()
	}
	if r.counters != nil {
		r.counters.Close()
	}
	_ = r.data.Drop(ctx)
}

// SleepUntil waits until t, or until ctx ends (its error then).
func SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}
