package profile

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// SampleEvery is how often, on average, a capture counts the active
// sessions.
const SampleEvery = 200 * time.Millisecond

// SampleGap is the wait before the next count of the active sessions: from
// half to one and a half SampleEvery, at random. Counted at a fixed period,
// a paced load (4 users at 40 transactions a second each, a transaction
// every 25 ms) was seen at one phase of its schedule: its mean active
// sessions read 0, 0.03, 0.13 and 0.83 in four captures of one load.
func SampleGap() time.Duration {
	return SampleEvery/2 + rand.N(SampleEvery)
}

// Env is what a capture runs with.
type Env struct {
	Prog *progress.Printer
	Tool string // calibra's version
	// Edge and Window are the OS observer's, for the data's device; nil
	// when the server is not on this machine.
	Edge   func() time.Time
	Window func(from, to time.Time) *results.Observe
}

// Window is what two readings of the counters say of the time between.
type Window struct {
	Rates        Rates
	HitPct       *float64
	WALPerCommit *float64
	SeqPct       *float64
	Missing      map[string]string
}

// Between is the rates and shape of the counters from a to b, secs apart:
// the one definition the capture and the replay share.
func Between(a, b Counters, secs float64) Window {
	w := Window{Missing: map[string]string{}}
	maps.Copy(w.Missing, a.Missing)
	maps.Copy(w.Missing, b.Missing)
	d := func(x, y *int64) (float64, bool) {
		if x == nil || y == nil || secs <= 0 {
			return 0, false
		}
		return float64(*y - *x), true
	}
	if n, ok := d(a.PageReads, b.PageReads); ok {
		w.Rates.PageReadsPS = results.Round(n/secs, 1)
		if h, ok := d(a.PageHits, b.PageHits); ok && n+h > 0 {
			w.HitPct = ptr(results.Round(100*h/(n+h), 2))
		}
	}
	if n, ok := d(a.PageWrites, b.PageWrites); ok {
		w.Rates.PageWritesPS = results.Round(n/secs, 1)
	}
	commits, okC := d(a.Commits, b.Commits)
	if okC {
		w.Rates.CommitsPS = results.Round(commits/secs, 1)
	}
	if n, ok := d(a.WALBytes, b.WALBytes); ok {
		w.Rates.WALBytesPS = int64(math.Round(n / secs))
		if okC && commits > 0 {
			w.WALPerCommit = ptr(results.Round(n/commits, 0))
		}
	}
	if n, ok := d(a.WALSyncs, b.WALSyncs); ok {
		w.Rates.WALSyncsPS = results.Round(n/secs, 1)
	}
	if s, ok := d(a.SeqReads, b.SeqReads); ok {
		if all, ok := d(a.IOReads, b.IOReads); ok && all > 0 {
			w.SeqPct = ptr(results.Round(100*s/all, 1))
		}
	}
	return w
}

// Capture samples the server's counters over d and returns its profile.
// It checks the grants it needs first.
func Capture(ctx context.Context, e engine.Engine, d time.Duration, env Env) (*Profile, error) {
	dl, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	if err := dl.CheckGrants(ctx); err != nil {
		return nil, err
	}
	conn, err := dl.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	srv, err := conn.Server(ctx)
	if err != nil {
		return nil, err
	}
	info := e.Describe()
	p := &Profile{Version: Version, Kind: Kind, CannotCapture: cannotCapture,
		Captured: Captured{At: time.Now().UTC().Truncate(time.Second), Engine: e.Name(), Version: srv.Version, Managed: info.Managed, Tool: env.Tool}}
	from := time.Now()
	if env.Edge != nil {
		from = env.Edge()
	}
	a, err := conn.Counters(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	act, err := sampleActive(ctx, conn, d, env)
	if err != nil {
		return nil, err
	}
	b, err := conn.Counters(ctx)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	to := time.Now()
	if env.Edge != nil {
		to = env.Edge()
	}
	// The database's size at the end, which the window's writes grew.
	if srv, err = conn.Server(ctx); err != nil {
		return nil, err
	}
	w := Between(a, b, secs)
	p.Captured.DurationS = results.Round(secs, 2)
	p.Rates = w.Rates
	p.Shape = Shape{PageBytes: srv.PageBytes, DataBytes: srv.DataBytes, CacheBytes: srv.CacheBytes, ConcurrencyMax: act.most, SequentialPct: w.SeqPct}
	if act.samples > 0 {
		p.Shape.Concurrency = results.Round(float64(act.sum)/float64(act.samples), 2)
	}
	if w.HitPct != nil {
		p.Shape.CacheHitPct = *w.HitPct
	}
	if w.WALPerCommit != nil {
		p.Shape.WALBytesPerCommit = *w.WALPerCommit
	}
	p.Shape.HotSetBytes = hotSet(p.Shape)
	if rw := p.Rates.PageReadsPS + p.Rates.PageWritesPS; rw > 0 {
		p.Shape.ReadSharePct = results.Round(100*p.Rates.PageReadsPS/rw, 1)
	}
	if env.Window != nil {
		p.Device = device(env.Window(from, to), w.Missing)
	}
	if len(w.Missing) > 0 {
		p.Missing = w.Missing
	}
	return p, nil
}

// active is what the samples of the sessions at work saw: how many
// samples, their sum and the most at once.
type active struct{ samples, sum, most int }

// sampleActive counts the sessions at work at random intervals
// (SampleGap) for d.
func sampleActive(ctx context.Context, conn Conn, d time.Duration, env Env) (active, error) {
	var a active
	start := time.Now()
	for end := start.Add(d); time.Now().Before(end); {
		wait := time.NewTimer(SampleGap())
		select {
		case <-ctx.Done():
			wait.Stop()
			return a, ctx.Err()
		case <-wait.C:
		}
		n, err := conn.Active(ctx)
		if err != nil {
			return a, err
		}
		a.samples, a.sum, a.most = a.samples+1, a.sum+n, max(a.most, n)
		env.Prog.Status(fmt.Sprintf("profile: %s of %s, %d active", time.Since(start).Round(time.Second), d, n))
	}
	return a, nil
}

// hotSet estimates the pages the load touches again and again: the
// server counts no distinct pages, so when the cache served nine requests
// in ten or more the hot set is taken as the cache (the hits came from
// it), else as the whole database.
func hotSet(s Shape) int64 {
	if s.CacheHitPct >= 90 && s.CacheBytes > 0 {
		return min(s.CacheBytes, s.DataBytes)
	}
	return s.DataBytes
}

func device(o *results.Observe, missing map[string]string) *Device {
	if o == nil || o.Disk == nil || len(o.Devices) == 0 {
		if o != nil && o.Missing["disk"] != "" {
			missing["device"] = o.Missing["disk"]
		}
		return nil
	}
	return &Device{Name: o.Devices[0], ReadIOPS: o.Disk.RIOPS, WriteIOPS: o.Disk.WIOPS, ReadMBPS: o.Disk.RMBps, WriteMBPS: o.Disk.WMBps, UtilPct: o.Disk.UtilPct}
}

func ptr[T any](v T) *T { return &v }
