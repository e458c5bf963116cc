// Package live exports a run's figures while it runs (--metrics-listen):
// an OpenMetrics endpoint at /metrics that Prometheus scrapes. Every
// figure is one calibra measures for its own results: the load
// generator's counters and HdrHistogram latencies, the observers' last
// interval, each finished point of a sweep.
package live

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
)

// LatencyBuckets are the upper bounds of the latency histograms' buckets:
// fixed, so that a dashboard's quantiles compare across runs.
var LatencyBuckets = []time.Duration{
	250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// Board holds the figures the endpoint exports: set by the run as it
// goes, read at each scrape. Its zero value is not usable: see NewBoard.
type Board struct {
	mu      sync.Mutex
	step    string
	phase   string
	users   int
	oltp    bool // an oltp load has reported
	types   [oltp.NumTxTypes]oltp.Outcomes
	lat     [oltp.NumTxTypes]*hist.Buckets // since the first second
	observe func() *results.Observe
	device  map[[2]string]results.DevicePoint // by spec and queue depth
	iocal   map[[2]string]results.IOCalPoint  // by test and jobs
}

// NewBoard returns an empty board.
func NewBoard() *Board {
	b := &Board{device: map[[2]string]results.DevicePoint{}, iocal: map[[2]string]results.IOCalPoint{}}
	for i := range b.lat {
		b.lat[i] = hist.NewBuckets(LatencyBuckets)
	}
	return b
}

// Step names the step that runs, as the progress line does; the phase
// starts empty.
func (b *Board) Step(step string) {
	b.mu.Lock()
	b.step, b.phase = step, ""
	b.mu.Unlock()
}

// Phase names what the step is doing.
func (b *Board) Phase(phase string) {
	b.mu.Lock()
	b.phase = phase
	b.mu.Unlock()
}

// Observe makes f the source of the host's, the device's and the
// database's figures (the observers' last interval); nil removes it.
func (b *Board) Observe(f func() *results.Observe) {
	b.mu.Lock()
	b.observe = f
	b.mu.Unlock()
}

// Second adds an oltp load's second (oltp.Watcher).
func (b *Board) Second(s *oltp.Second) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.oltp, b.phase, b.users = true, s.Phase, s.Users
	for i, o := range s.Types {
		t := &b.types[i]
		t.Count += o.Count
		t.Rollbacks += o.Rollbacks
		t.Errors += o.Errors
		t.Sum += o.Sum
	}
	for _, l := range s.Latencies {
		b.lat[l.Type].Record(l.Lat)
	}
}

// DevicePoint says which device point runs, and keeps its figures once
// done (p not nil).
func (b *Board) DevicePoint(spec string, qd int, p *results.DevicePoint) {
	key := [2]string{spec, strconv.Itoa(qd)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.phase = spec + " qd " + key[1]
	if p != nil {
		b.device[key] = *p
	}
}

// IOCalPoint says which iocal point runs, and keeps its figures once
// done (p not nil).
func (b *Board) IOCalPoint(test string, jobs int, p *results.IOCalPoint) {
	key := [2]string{test, strconv.Itoa(jobs)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.phase = test + " " + key[1] + " jobs"
	if p != nil {
		b.iocal[key] = *p
	}
}

// Describe sends nothing: the board's metrics come and go with the run
// (an unchecked collector).
func (b *Board) Describe(chan<- *prometheus.Desc) {}

// Collect sends every figure the board holds (prometheus.Collector).
func (b *Board) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := emitter{ch}
	e.gauge(stepInfo, 1, b.step)
	if b.phase != "" {
		e.gauge(phaseInfo, 1, b.phase)
	}
	if b.oltp {
		b.collectOLTP(e)
	}
	if b.observe != nil {
		collectObserve(e, b.observe())
	}
	for k, p := range b.device {
		collectDevice(e, k, p)
	}
	for k, p := range b.iocal {
		collectIOCal(e, k, p)
	}
}

func (b *Board) collectOLTP(e emitter) {
	e.gauge(users, float64(b.users))
	e.counter(newOrders, float64(b.types[oltp.NewOrder].Count-b.types[oltp.NewOrder].Rollbacks))
	for i, t := range b.types {
		name := oltp.TxType(i).String()
		e.counter(transactions, float64(t.Count-t.Rollbacks), name, "commit")
		e.counter(transactions, float64(t.Rollbacks), name, "rollback")
		e.counter(transactions, float64(t.Errors), name, "error")
		counts := b.lat[i].Cumulative()
		buckets := make(map[float64]uint64, len(counts))
		for j, n := range counts {
			buckets[LatencyBuckets[j].Seconds()] = n
		}
		e.ch <- prometheus.MustNewConstHistogram(latency, uint64(t.Count), t.Sum.Seconds(), buckets, name)
	}
}
