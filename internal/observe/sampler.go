package observe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Config says what a Sampler watches and how often.
type Config struct {
	// Path is the storage under test: the block device under it is the one
	// whose counters are read.
	Path string
	// WALPath, when set, is where the database's WAL lives: its device's
	// counters are read apart (Observe.WALDisk) unless it is Path's.
	WALPath string
	// Proc and Sys are the roots of procfs and sysfs ("/proc", "/sys" when
	// empty); tests point them at recorded files.
	Proc, Sys string
	// Interval is the period of the OS and counter readings (1s when zero).
	Interval time.Duration
	// Engine is the database to sample, through its dialect (Dialects);
	// nil samples the OS only. The sampler opens one connection of its own.
	Engine engine.Engine
	// WaitInterval is the period of the wait-event polls (100ms when
	// zero).
	WaitInterval time.Duration
	// Roots are the processes whose trees are the workload (calibra itself
	// when empty); the database server joins them when it runs on this
	// machine. The CPU of every other process is another load on the host.
	Roots []int
}

// words are the engine's terms, the neutral ones without an engine.
func (s *Sampler) words() terms.Words {
	if s.cfg.Engine == nil {
		return terms.Neutral
	}
	return terms.Of(s.cfg.Engine.Name())
}

// logName is the engine's word for its log of changes ("WAL", "redo
// log").
func (s *Sampler) logName() string { return s.words().Log }

// Sampler reads the OS (and the database) every Interval, and polls the
// database's wait events every WaitInterval, from Start until Stop. It
// keeps every reading in memory: about 0.5 KB a second of OS and counter
// readings, plus a few bytes per wait poll.
type Sampler struct {
	cfg        Config
	devices    []string
	walDevices []string          // empty when the WAL shares the data's device
	static     map[string]string // why a metric cannot be measured at all here
	db         *dbObserver       // nil without a database to sample
	replicator engine.Replicator // nil without standbys
	replicas   []replicaWatch

	ctx    context.Context
	cancel context.CancelFunc
	loops  sync.WaitGroup

	mu       sync.Mutex
	readings []reading // sorted by time
	polls    []waitPoll
	waitKeys []WaitKey
	keyIndex map[WaitKey]int
}

// reading is every counter at one instant.
type reading struct {
	at       time.Time
	tick     bool // taken by the Interval loop, not by Edge
	os       osCounters
	walDisk  *diskCounters // nil without a WAL device of its own
	db       *dbReading
	outside  *uint64     // outsideTicks; nil when the processes could not be read
	replicas []replicaIO // each standby's I/O, in replicas' order
}

// waitPoll is one wait-event poll: how many active sessions were in each
// wait event (by index into Sampler.waitKeys).
type waitPoll struct {
	at     time.Time
	counts []keyCount
	err    error
}

type keyCount struct{ key, n int }

// Sample is what happened in one Interval, ending at Time.
type Sample struct {
	Time    time.Time
	Observe *results.Observe
}

// Start resolves the block device under cfg.Path, connects the database
// sampler if cfg.Engine is set, takes a first reading and starts sampling.
// A device that cannot be resolved, or an engine without an observer, is
// not an error: those metrics are then absent with the reason. ctx bounds
// only the start: sampling goes on until Stop, so that an interrupted step
// can still close its window.
func Start(ctx context.Context, cfg Config) (*Sampler, error) {
	if cfg.Proc == "" {
		cfg.Proc = "/proc"
	}
	if cfg.Sys == "" {
		cfg.Sys = "/sys"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.WaitInterval <= 0 {
		cfg.WaitInterval = 100 * time.Millisecond
	}
	if len(cfg.Roots) == 0 {
		cfg.Roots = []int{os.Getpid()}
	}
	s := &Sampler{cfg: cfg, static: map[string]string{}, keyIndex: map[WaitKey]int{}}
	if cfg.Path == "" {
		s.static["disk"] = "no storage path was given"
	} else if dev, err := blockDevice(cfg.Proc, cfg.Sys, absPath(cfg.Path)); err != nil {
		s.static["disk"] = err.Error()
	} else {
		s.devices = []string{dev}
	}
	if cfg.WALPath != "" && len(s.devices) > 0 {
		switch dev, err := blockDevice(cfg.Proc, cfg.Sys, absPath(cfg.WALPath)); {
		case err != nil:
			s.static["wal_disk"] = err.Error()
		case dev == s.devices[0]:
			s.static["wal_disk"] = "the " + s.logName() + " is on the data's device (" + dev + "): disk holds both"
		default:
			s.walDevices = []string{dev}
		}
	}
	if first := readOS(cfg.Proc, s.devices); first.cpu == nil {
		return nil, fmt.Errorf("start the OS sampler: %s", first.missing["cpu"])
	}
	if cfg.Engine != nil {
		var in *fault.InputError
		switch src, err := Dialects.For(cfg.Engine); {
		case errors.As(err, &in):
			// No dialect for the engine: the run loses only the database's
			// figures, and each window says why.
			s.static["db"] = in.Msg
		case err != nil:
			return nil, err
		default:
			if s.db, err = openDB(ctx, src, cfg.Proc); err != nil {
				return nil, err
			}
			if pid := s.db.info.ServerPID; pid > 0 {
				s.cfg.Roots = append(slices.Clone(s.cfg.Roots), pid)
			}
		}
	}
	if rep, ok := cfg.Engine.(engine.Replicator); ok && len(rep.Replicas()) > 0 {
		s.watchReplicas(rep)
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.take(true)
	s.loop(cfg.Interval, func() { s.take(true) })
	if s.db != nil {
		s.loop(cfg.WaitInterval, s.pollWaits)
	}
	return s, nil
}

func (s *Sampler) loop(every time.Duration, f func()) {
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				f()
			}
		}
	}()
}

// Stop ends sampling and closes the database connection. Window and
// Samples still answer from the readings taken.
func (s *Sampler) Stop() error {
	s.cancel()
	s.loops.Wait()
	if s.db != nil {
		s.db.close()
	}
	return nil
}

// Restart runs f, which restarts the server, without counting the polls
// that the restart breaks as failures; the next reading reconnects to the
// new server at once.
func (s *Sampler) Restart(f func() error) error {
	if s.db == nil {
		return f()
	}
	return s.db.restart(f)
}

// Edge reads every counter now, keeps the reading and returns its time.
// Call it at the start and at the end of a timed window and pass the two
// times to Window: the rates then are exact deltas over that window, not
// the nearest Interval's. After Stop it returns the last reading's time.
//
// A database may publish its counters late (PostgreSQL's backends between
// transactions, at most once a second, and from 15 up to 10 s late when
// they go idle right after a flush; a session that ends publishes at once).
// So the database counters at an edge can miss up to a second of a running
// load: take the end Edge after the load's sessions have closed when a rate
// must be exact.
// The averages (time per read, per WAL write) are not biased by this.
func (s *Sampler) Edge() time.Time {
	if s.ctx.Err() != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.readings[len(s.readings)-1].at
	}
	return s.take(false)
}

func (s *Sampler) take(tick bool) time.Time {
	r := reading{at: time.Now(), tick: tick, os: readOS(s.cfg.Proc, s.devices)}
	if len(s.walDevices) > 0 {
		r.walDisk, _ = readDisks(filepath.Join(s.cfg.Proc, "diskstats"), s.walDevices)
	}
	procs, err := readProcs(s.cfg.Proc)
	if err == nil && len(procs) > 0 {
		r.outside = ptr(outsideTicks(procs, s.cfg.Roots))
	}
	r.replicas = s.readReplicas(procs)
	if s.db != nil {
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		c := s.db.counters(ctx, !tick)
		cancel()
		r.db = &c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A tick and an Edge may race; keep the readings in time order.
	i := sort.Search(len(s.readings), func(i int) bool { return s.readings[i].at.After(r.at) })
	s.readings = append(s.readings, reading{})
	copy(s.readings[i+1:], s.readings[i:])
	s.readings[i] = r
	return r.at
}

func (s *Sampler) pollWaits() {
	at := time.Now()
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.WaitInterval*5)
	rows, err := s.db.waits(ctx)
	cancel()
	if s.ctx.Err() != nil {
		return // stopping: the poll was cut short, not failed
	}
	if errors.Is(err, errRestarting) {
		return // calibra is restarting the server: not a failed poll
	}
	p := waitPoll{at: at, err: err}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rows {
		k, ok := s.keyIndex[r.Key]
		if !ok {
			k = len(s.waitKeys)
			s.waitKeys = append(s.waitKeys, r.Key)
			s.keyIndex[r.Key] = k
		}
		p.counts = append(p.counts, keyCount{key: k, n: r.N})
	}
	s.polls = append(s.polls, p)
}

// Window is what happened between from and to: rates and averages from
// the latest reading at or before from and the earliest at or after to
// (taking one now if to is past the last reading), waits from the polls
// between those two readings. With times from Edge the window is exact.
func (s *Sampler) Window(from, to time.Time) *results.Observe {
	s.mu.Lock()
	last := s.readings[len(s.readings)-1].at
	s.mu.Unlock()
	if to.After(last) && s.ctx.Err() == nil {
		s.take(false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.readings
	// The latest reading at or before from (the first if none is).
	i := sort.Search(len(rs), func(i int) bool { return rs[i].at.After(from) }) - 1
	i = max(i, 0)
	// The earliest reading at or after to (the last if none is).
	j := sort.Search(len(rs), func(j int) bool { return !rs[j].at.Before(to) })
	j = min(j, len(rs)-1)
	o := s.between(rs[i], rs[j], s.pollsBetween(rs[i].at, rs[j].at))
	if len(s.replicas) > 0 {
		if o.Missing == nil {
			o.Missing = map[string]string{}
		}
		o.Replicas = s.replicasBetween(rs[i:j+1], o.Missing)
		if len(o.Missing) == 0 {
			o.Missing = nil
		}
	}
	return o
}

// EngineLimits names each database metric this server cannot give at all
// (its version, its settings), with the reason: true of the whole run, so
// said once rather than in every window's missing.
func (s *Sampler) EngineLimits() map[string]string {
	if s.db == nil {
		return nil
	}
	return maps.Clone(s.db.info.Limits)
}

// Samples returns one Sample per Interval reading, from the second one on.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Sample
	var prev *reading
	for i := range s.readings {
		r := &s.readings[i]
		if !r.tick {
			continue
		}
		if prev != nil {
			out = append(out, Sample{Time: r.at, Observe: s.between(*prev, *r, s.pollsBetween(prev.at, r.at))})
		}
		prev = r
	}
	return out
}

// Latest is the last Interval's Sample's observations (a live view, as
// --metrics-listen exports it); nil before the second reading.
func (s *Sampler) Latest() *results.Observe {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *reading
	for i := len(s.readings) - 1; i >= 0; i-- {
		r := &s.readings[i]
		if !r.tick {
			continue
		}
		if last != nil {
			return s.between(*r, *last, s.pollsBetween(r.at, last.at))
		}
		last = r
	}
	return nil
}

// pollsBetween returns the polls taken in (from, to]; the caller holds mu.
func (s *Sampler) pollsBetween(from, to time.Time) []waitPoll {
	i := sort.Search(len(s.polls), func(i int) bool { return s.polls[i].at.After(from) })
	j := sort.Search(len(s.polls), func(j int) bool { return s.polls[j].at.After(to) })
	return s.polls[i:j]
}

// between derives the observe block from two readings and the polls in
// between; the caller holds mu.
func (s *Sampler) between(a, b reading, polls []waitPoll) *results.Observe {
	o := &results.Observe{From: a.at.UTC(), To: b.at.UTC(), WindowS: round3(b.at.Sub(a.at).Seconds()),
		Devices: slices.Clone(s.devices), Missing: map[string]string{}}
	for k, why := range s.static {
		o.Missing[k] = why
	}
	if !b.at.After(a.at) {
		o.Missing["window"] = "the window holds a single reading: it is shorter than the sampling interval and had no Edge at both ends"
		return o
	}
	osRates(a.os, b.os, o.WindowS, o)
	if len(s.walDevices) > 0 {
		o.WALDevices = slices.Clone(s.walDevices)
		if a.walDisk != nil && b.walDisk != nil {
			o.WALDisk = diskRates(*a.walDisk, *b.walDisk, o.WindowS, o.Missing)
		} else {
			o.Missing["wal_disk"] = "the " + s.logName() + " device's counters could not be read"
		}
	}
	switch {
	case a.outside == nil || b.outside == nil:
		o.Missing["cpu_outside_pct"] = "the processes under " + s.cfg.Proc + " could not be read"
	case a.os.cpu != nil && b.os.cpu != nil && b.os.cpu.total() > a.os.cpu.total():
		// The growth of a sum over a changing set of processes may be
		// negative (one moved into calibra's tree): none is then seen.
		grown := max(float64(*b.outside)-float64(*a.outside), 0)
		busy := float64(b.os.cpu.total()-a.os.cpu.total()) - float64(b.os.cpu.idle-a.os.cpu.idle) - float64(b.os.cpu.iowait-a.os.cpu.iowait)
		o.CPUOutsidePct = ptr(round3(100 * min(grown, max(busy, 0)) / float64(b.os.cpu.total()-a.os.cpu.total())))
	}
	if s.db != nil {
		o.DB = &results.ObserveDB{Database: s.db.info.Database, WaitIntervalMs: float64(s.cfg.WaitInterval) / float64(time.Millisecond)}
		dbRates(*a.db, *b.db, o.DB, s.db.info.Limits, o.Missing)
		o.DB.Nodes = nodeRates(a.db.Nodes, b.db.Nodes, o.WindowS, o.Missing)
		for k := range s.db.info.Limits {
			delete(o.Missing, k) // said once for the run: EngineLimits
		}
		o.Waits = s.aggregateWaits(polls, o.DB, o.Missing)
	}
	if len(o.Missing) == 0 {
		o.Missing = nil
	}
	return o
}

// aggregateWaits turns polls into the top-waits list: each backend seen in
// an event counts as the time one poll stands for in it (the ASH
// estimate): one WaitInterval, or the polls' mean spacing when the machine
// kept them further apart (a poll late behind a busy CPU stands for the
// time since the one before it, not a tenth of a second). Failed polls
// count nothing, so the average active sessions are taken over the polls
// that succeeded.
func (s *Sampler) aggregateWaits(polls []waitPoll, db *results.ObserveDB, missing map[string]string) []results.Wait {
	perKey := map[int]int{}
	total := 0
	var firstErr error
	for _, p := range polls {
		if p.err != nil {
			if firstErr == nil {
				firstErr = p.err
			}
			db.WaitSamplesFailed++
			continue
		}
		db.WaitSamples++
		for _, c := range p.counts {
			perKey[c.key] += c.n
			total += c.n
		}
	}
	if firstErr != nil {
		key := "waits.failed_polls"
		if db.WaitSamples == 0 {
			key = "waits"
		}
		missing[key] = fmt.Sprintf("%d of %d polls of %s failed, the first: %v",
			db.WaitSamplesFailed, len(polls), s.db.info.WaitView, firstErr)
	}
	if db.WaitSamples == 0 {
		if firstErr == nil {
			missing["waits"] = "no poll of " + s.db.info.WaitView + " fell inside the window"
		}
		return nil
	}
	db.ActiveSessionsAvg = ptr(round3(float64(total) / float64(db.WaitSamples)))
	step := s.cfg.WaitInterval.Seconds()
	if n := len(polls); n > 1 {
		step = max(step, polls[n-1].at.Sub(polls[0].at).Seconds()/float64(n-1))
	}
	waits := make([]results.Wait, 0, len(perKey))
	for k, n := range perKey {
		key := s.waitKeys[k]
		w := results.Wait{Class: key.Class, Event: key.Event, Samples: n, Seconds: round3(float64(n) * step),
			SharePct: round3(100 * float64(n) / float64(total))}
		w.AvgMs = s.db.src.WaitLatency(key, db)
		waits = append(waits, w)
	}
	sort.Slice(waits, func(i, j int) bool {
		if waits[i].Samples != waits[j].Samples {
			return waits[i].Samples > waits[j].Samples
		}
		return waits[i].Class+"/"+waits[i].Event < waits[j].Class+"/"+waits[j].Event
	})
	return waits
}
