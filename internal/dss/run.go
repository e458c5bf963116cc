package dss

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// RunConfig says which tests to run and how.
type RunConfig struct {
	Power, Throughput bool
	// Streams is the throughput test's query streams; 0 takes the
	// specification's minimum for the built scale factor.
	Streams int
	Seed    uint64
	// DOP is the degree of parallelism of every query (PostgreSQL's
	// max_parallel_workers_per_gather); below 0 the server's own setting
	// stays.
	DOP          int
	QueryTimeout time.Duration // 0: none
	// Edge reads the observers at a test's start and end and returns the
	// time of that reading; nil uses the clock.
	Edge func() time.Time
}

// Run runs the power test, then the throughput test, as cfg asks, on a
// built database; it returns what was measured also when it stops early.
func Run(ctx context.Context, e engine.Engine, cfg RunConfig, prog *progress.Printer) (*results.DSS, error) {
	d, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	bi, err := Built(ctx, e)
	if err != nil {
		return nil, err
	}
	if cfg.Streams <= 0 {
		cfg.Streams = MinStreams(bi.ScaleFactor)
	}
	if cfg.Edge == nil {
		cfg.Edge = time.Now
	}
	out := &results.DSS{Workload: Workload, ScaleFactor: bi.ScaleFactor, Seed: cfg.Seed, TimeoutS: cfg.QueryTimeout.Seconds(),
		Missing: map[string]string{}}
	r := &runner{d: d, cfg: cfg, bi: bi, prog: prog}
	conn, err := r.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if n, err := completePair(ctx, conn, bi); err != nil {
		return nil, fmt.Errorf("complete an interrupted refresh pair: %w", err)
	} else if n > 0 {
		prog.Phase("dss: deleted %d orders an interrupted RF1 had added (its RF2 never ran), so the data is as loaded", n)
	}
	if out.Parallelism, err = conn.Parallelism(ctx); err != nil {
		return nil, err
	}
	if cfg.Power {
		out.Power, err = r.power(ctx, conn)
		if err != nil {
			return finish(out, cfg), err
		}
	}
	if cfg.Throughput {
		out.Throughput, err = r.throughput(ctx)
	}
	return finish(out, cfg), err
}

// finish computes the metrics from what was measured, or says why one
// cannot be computed.
func finish(out *results.DSS, cfg RunConfig) *results.DSS {
	sf := out.ScaleFactor
	var power, thru *float64
	if p := out.Power; p != nil {
		roundTimes(p.Queries)
		roundTimes(p.Refresh)
		qs, why := seconds(p.Queries, Queries)
		rs, rwhy := seconds(p.Refresh, 2)
		if why == "" {
			p.GeomeanS = ptr(Geomean(qs))
		} else {
			out.Missing["geomean_s"] = why
		}
		switch {
		case why != "":
			out.Missing["power_at_size"] = why
		case rwhy != "":
			out.Missing["power_at_size"] = rwhy
		default:
			p.PowerAtSize = ptr(PowerAtSize(sf, Round01All(qs), Round01All(rs)))
			power = p.PowerAtSize
		}
	} else if cfg.Power {
		out.Missing["power_at_size"] = "the power test did not run"
	}
	if th := out.Throughput; th != nil {
		why := ""
		roundTimes(th.Refresh)
		for _, s := range th.StreamRuns {
			roundTimes(s.Queries)
			if _, w := seconds(s.Queries, Queries); w != "" && why == "" {
				why = fmt.Sprintf("stream %d: %s", s.Stream, w)
			}
		}
		if _, w := seconds(th.Refresh, 2*th.Streams); w != "" && why == "" {
			why = "refresh stream: " + w
		}
		if why == "" && th.ElapsedS > 0 {
			th.ThroughputAtSize = ptr(ThroughputAtSize(sf, th.Streams, Round01(th.ElapsedS)))
			thru = th.ThroughputAtSize
		} else {
			out.Missing["throughput_at_size"] = why
		}
	} else if cfg.Throughput {
		out.Missing["throughput_at_size"] = "the throughput test did not run"
	}
	switch {
	case power != nil && thru != nil:
		out.QphH = ptr(QphH(*power, *thru))
	case !cfg.Power || !cfg.Throughput:
		out.Missing["qphh"] = "QphH needs a power and a throughput test in one run ('calibra dss run')"
	default:
		out.Missing["qphh"] = "Power@Size or Throughput@Size is missing"
	}
	streams := 0
	if out.Throughput != nil {
		streams = out.Throughput.Streams
	}
	out.InvalidReasons = InvalidReasons(sf, streams)
	valid := len(out.InvalidReasons) == 0
	out.Valid = &valid
	return out
}

// roundTimes records each run's time by clause 5.3.7.5 beside the raw one.
func roundTimes(runs []results.DSSQuery) {
	for i := range runs {
		if s := runs[i].Seconds; s != nil {
			runs[i].SecondsRounded = ptr(Round01(*s))
		}
	}
}

// seconds returns the intervals of runs, or why they do not make a metric:
// one timed out, failed or never ran.
func seconds(runs []results.DSSQuery, want int) ([]float64, string) {
	var xs []float64
	for _, r := range runs {
		switch {
		case r.TimedOut:
			return nil, fmt.Sprintf("%s timed out (--query-timeout)", name(r.Q))
		case r.Error == interrupted:
			return nil, fmt.Sprintf("the test was interrupted during %s", name(r.Q))
		case r.Seconds == nil:
			return nil, fmt.Sprintf("%s failed", name(r.Q))
		}
		xs = append(xs, *r.Seconds)
	}
	if len(xs) < want {
		return nil, fmt.Sprintf("only %d of %d ran", len(xs), want)
	}
	return xs, ""
}

// interrupted is the error of the query a Ctrl-C stopped.
const interrupted = "interrupted"

func name(q string) string {
	if _, err := strconv.Atoi(q); err == nil {
		return "Q" + q
	}
	return q
}

func ptr(f float64) *float64 { return &f }

type runner struct {
	d    Dialect
	cfg  RunConfig
	bi   *BuildInfo
	prog *progress.Printer
}

// connect opens a stream's connection with the run's settings.
func (r *runner) connect(ctx context.Context) (Conn, error) {
	return r.d.Connect(ctx, r.cfg.DOP)
}

// power runs RF1, stream 0's 22 queries and RF2 on one connection
// (clause 5.3.3).
func (r *runner) power(ctx context.Context, conn Conn) (*results.DSSPower, error) {
	r.prog.Phase("dss power: RF1, the 22 queries in stream 0's order, RF2")
	p := &results.DSSPower{StartedAt: r.cfg.Edge()}
	start := p.StartedAt
	defer func() {
		p.FinishedAt = r.cfg.Edge()
		p.ElapsedS = p.FinishedAt.Sub(start).Seconds()
	}()
	rf, err := r.refresh(ctx, conn, 1, start)
	p.Refresh = append(p.Refresh, rf)
	if err != nil {
		return p, err
	}
	for _, q := range Order(0) {
		run, err := r.query(ctx, conn, 0, q, start)
		p.Queries = append(p.Queries, run)
		if err != nil {
			return p, err
		}
		r.prog.Phase("dss power: Q%d %s", q, describe(run))
	}
	rf, err = r.refresh(ctx, conn, 2, start)
	p.Refresh = append(p.Refresh, rf)
	return p, err
}

func describe(run results.DSSQuery) string {
	switch {
	case run.TimedOut:
		return "timed out"
	case run.Seconds == nil:
		return "failed: " + run.Error
	}
	return fmt.Sprintf("%.2f s, %d rows", *run.Seconds, run.Rows)
}

// throughput runs S query streams, each on its own connection in its own
// order, beside a refresh stream running S pairs of RF1 and RF2 (clause
// 5.3.4); its elapsed time runs from the first start to the last end.
func (r *runner) throughput(ctx context.Context) (*results.DSSThroughput, error) {
	s := r.cfg.Streams
	r.prog.Phase("dss throughput: %d query streams and a refresh stream", s)
	th := &results.DSSThroughput{Streams: s, StreamRuns: make([]results.DSSStream, s)}
	conns := make([]Conn, 0, s+1)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range s + 1 {
		c, err := r.connect(ctx)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	bar := r.prog.Bar(int64(s*(Queries+2)), "throughput", "queries")
	defer bar.Finish()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, s+1)
	var wg sync.WaitGroup
	th.StartedAt = r.cfg.Edge()
	start := th.StartedAt
	for i := range s {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &th.StreamRuns[i]
			st.Stream, st.Order = i+1, Order(i+1)
			t0 := time.Now()
			for _, q := range st.Order {
				run, err := r.query(ctx, conns[i], i+1, q, start)
				st.Queries = append(st.Queries, run)
				bar.Add(1)
				if err != nil {
					errs[i] = err
					cancel()
					break
				}
			}
			st.ElapsedS = time.Since(t0).Seconds()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range s {
			for _, f := range []int{1, 2} {
				rf, err := r.refresh(ctx, conns[s], f, start)
				th.Refresh = append(th.Refresh, rf)
				bar.Add(1)
				if err != nil {
					errs[s] = err
					cancel()
					return
				}
			}
		}
	}()
	wg.Wait()
	th.FinishedAt = r.cfg.Edge()
	th.ElapsedS = th.FinishedAt.Sub(start).Seconds()
	return th, errors.Join(errs...)
}

// query runs query q of a stream and times it from its first byte sent to
// its last row read. A statement timeout is recorded as such, never as a
// time; an error or an interruption stops the stream.
func (r *runner) query(ctx context.Context, conn Conn, stream, q int, testStart time.Time) (results.DSSQuery, error) {
	params := NewParams(r.cfg.Seed, stream, q, r.bi.ScaleFactor)
	run := results.DSSQuery{Q: strconv.Itoa(q), Params: params}
	// The timeout bounds the queries only: not the setup, nor the refresh
	// functions, which must complete for the database to stay re-runnable.
	if r.cfg.QueryTimeout > 0 {
		if err := conn.SetTimeout(ctx, r.cfg.QueryTimeout); err != nil {
			return run, r.outcome(ctx, &run, time.Now(), err)
		}
		defer conn.SetTimeout(context.Background(), 0)
	}
	t0 := time.Now()
	run.StartS = t0.Sub(testStart).Seconds()
	rows, err := countRows(ctx, conn, r.d.Query(q, Text(q, params)))
	run.Rows = rows
	return run, r.outcome(ctx, &run, t0, err)
}

// refresh runs RF1 or RF2 and records it like a query.
func (r *runner) refresh(ctx context.Context, conn Conn, f int, testStart time.Time) (results.DSSQuery, error) {
	run := results.DSSQuery{Q: fmt.Sprintf("RF%d", f)}
	t0 := time.Now()
	run.StartS = t0.Sub(testStart).Seconds()
	var err error
	if f == 1 {
		run.Rows, err = rf1(ctx, conn, r.bi)
	} else {
		run.Rows, err = rf2(ctx, conn, r.bi)
	}
	return run, r.outcome(ctx, &run, t0, err)
}

// outcome records a run's time, timeout or error; an error (not a timeout)
// stops the stream.
func (r *runner) outcome(ctx context.Context, run *results.DSSQuery, t0 time.Time, err error) error {
	if err == nil {
		run.Seconds = ptr(time.Since(t0).Seconds())
		return nil
	}
	if ctx.Err() != nil {
		run.Error = interrupted
		return ctx.Err()
	}
	if r.d.TimedOut(err) {
		run.TimedOut = true
		return nil
	}
	run.Error = err.Error()
	return fmt.Errorf("%s: %w", name(run.Q), err)
}

// countRows runs a query and counts the rows it returns, reading them as
// they come without keeping them.
func countRows(ctx context.Context, conn Conn, sql string) (int64, error) {
	var n int64
	err := conn.Rows(ctx, sql, func([][]byte) { n++ })
	return n, err
}
