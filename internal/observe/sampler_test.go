package observe

import (
	"bytes"
	"context"
	"encoding/csv"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// fakeSampler holds readings whose CPU ticks grow by 400 a second (25
// busy), so that a window's span shows in its rates, and wait polls.
func fakeSampler(t0 time.Time, at ...float64) *Sampler {
	s := &Sampler{cfg: Config{Interval: time.Second, WaitInterval: 100 * time.Millisecond},
		static: map[string]string{}, keyIndex: map[WaitKey]int{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.cancel() // stopped: Window answers from what it holds
	for i, sec := range at {
		ticks := uint64(sec * 400)
		r := reading{at: t0.Add(time.Duration(sec * float64(time.Second))), tick: sec == float64(int(sec)),
			os: osCounters{cpu: &cpuTicks{user: ticks / 4, idle: ticks - ticks/4}, missing: map[string]string{}}}
		r.os.disk = &diskCounters{reads: uint64(i) * 1000, readTicks: uint64(i) * 1000}
		s.readings = append(s.readings, r)
	}
	return s
}

func TestWindowUsesTheReadingsThatBracketIt(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := fakeSampler(t0, 0, 1, 1.5, 2, 3, 3.25)
	s.devices = []string{"sda"}
	sec := func(v float64) time.Time { return t0.Add(time.Duration(v * float64(time.Second))) }
	for _, c := range []struct {
		name         string
		from, to     float64
		wantFrom     float64
		wantWindowS  float64
		wantReadIOPS float64
	}{
		{"Edge times are exact", 1.5, 3.25, 1.5, 1.75, 3000 / 1.75},
		{"other times widen to the readings around them", 0.5, 1.7, 0, 2, 1500},
		{"before the first reading starts at it", -4, 1, 0, 1, 1000},
		{"after the last reading ends at it", 3, 9, 3, 0.25, 4000},
	} {
		o := s.Window(sec(c.from), sec(c.to))
		if !o.From.Equal(sec(c.wantFrom)) || o.WindowS != c.wantWindowS {
			t.Errorf("%s: from %v over %v s, want %v over %v s", c.name, o.From, o.WindowS, sec(c.wantFrom), c.wantWindowS)
		}
		want(t, c.name+": r_iops", o.Disk.RIOPS, round3(c.wantReadIOPS))
		want(t, c.name+": busy", o.CPUBusyPct, 25)
		want(t, c.name+": await", o.Disk.AwaitMs, 1)
	}
	if o := s.Window(sec(3.25), sec(3.25)); o.Missing["window"] == "" || o.CPUBusyPct != nil {
		t.Errorf("a window of one reading: %+v, want nothing but a reason", o)
	}

	// Samples skip the Edge readings: one per Interval.
	samples := s.Samples()
	if len(samples) != 3 || !samples[0].Time.Equal(sec(1)) || !samples[2].Time.Equal(sec(3)) {
		t.Fatalf("samples at %v, want at 1, 2 and 3 s", samples)
	}
	// Latest is the last Sample, whatever Edge readings came after it.
	if l := s.Latest(); l == nil || !l.To.Equal(samples[2].Observe.To) || *l.Disk.RIOPS != *samples[2].Observe.Disk.RIOPS {
		t.Errorf("latest %+v, want the last sample %+v", l, samples[2].Observe)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, samples); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "time" || rows[0][1] != "cpu_busy_pct" {
		t.Fatalf("csv %v, %v: want a header and three rows", rows, err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	if r := rows[1]; r[0] != "2026-01-02T03:04:06Z" || r[col["cpu_busy_pct"]] != "25" ||
		r[col["disk_r_iops"]] != "1000" || r[col["mem_available_bytes"]] != "" || r[col["db_active_sessions"]] != "" {
		t.Errorf("first row %v: want the time in UTC, measured values, and empty cells for what was not measured", r)
	}
}

func TestWaitsAreSamplesTimesInterval(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := fakeSampler(t0, 0, 2)
	s.db = &dbObserver{src: readLatency{}, info: DBInfo{Database: "calibra", WaitView: "the sessions", Limits: map[string]string{}}}
	s.readings[0].db = &dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(100)), BlksHit: ptr(int64(900)), BlkReadTime: ptr(50.0),
		WALWrites: ptr(int64(10)), WALWriteTime: ptr(1.0), WALSyncs: ptr(int64(5)), WALSyncTime: ptr(10.0)}}
	s.readings[1].db = &dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(300)), BlksHit: ptr(int64(2700)), BlkReadTime: ptr(850.0),
		WALWrites: ptr(int64(10)), WALWriteTime: ptr(1.0), WALSyncs: ptr(int64(15)), WALSyncTime: ptr(30.0)}}
	cpu, read, lock := WaitKey{"CPU", "CPU"}, WaitKey{"IO", "DataFileRead"}, WaitKey{"Lock", "tuple"}
	s.waitKeys = []WaitKey{cpu, read, lock}
	// 20 polls in the window: 2 on CPU and 1 reading in each, one lock wait in
	// the first five; one poll failed; one poll lies outside the window.
	for i := 1; i <= 21; i++ {
		p := waitPoll{at: t0.Add(time.Duration(i) * 95 * time.Millisecond), counts: []keyCount{{0, 2}, {1, 1}}}
		if i <= 5 {
			p.counts = append(p.counts, keyCount{2, 1})
		}
		if i == 21 {
			p = waitPoll{at: p.at, err: context.DeadlineExceeded}
		}
		s.polls = append(s.polls, p)
	}
	s.polls = append(s.polls, waitPoll{at: t0.Add(3 * time.Second), counts: []keyCount{{2, 50}}})

	o := s.Window(t0, t0.Add(2*time.Second))
	if len(o.Waits) != 3 {
		t.Fatalf("waits %+v, want CPU, DataFileRead and tuple", o.Waits)
	}
	// 40 + 20 + 5 = 65 samples of 100 ms.
	for i, w := range []results.Wait{
		{Class: "CPU", Event: "CPU", Samples: 40, Seconds: 4, SharePct: 61.538},
		{Class: "IO", Event: "DataFileRead", Samples: 20, Seconds: 2, SharePct: 30.769, AvgMs: ptr(4.0)},
		{Class: "Lock", Event: "tuple", Samples: 5, Seconds: 0.5, SharePct: 7.692},
	} {
		got := o.Waits[i]
		if got.Class != w.Class || got.Event != w.Event || got.Samples != w.Samples || got.Seconds != w.Seconds ||
			got.SharePct != w.SharePct || (got.AvgMs == nil) != (w.AvgMs == nil) || (w.AvgMs != nil && *got.AvgMs != *w.AvgMs) {
			t.Errorf("waits[%d] = %+v (avg %v), want %+v (avg %v)", i, got, got.AvgMs, w, w.AvgMs)
		}
	}
	db := o.DB
	want(t, "active sessions", db.ActiveSessionsAvg, 3.25)
	if db.WaitSamples != 20 || db.WaitSamplesFailed != 1 || o.Missing["waits.failed_polls"] == "" {
		t.Errorf("%d polls, %d failed, missing %v: want 20, 1 and the failure", db.WaitSamples, db.WaitSamplesFailed, o.Missing)
	}
	// 200 reads in 800 ms; no WAL write in the window; 10 syncs in 20 ms.
	want(t, "data-file read ms", db.DataFileReadAvgMs, 4)
	want(t, "hit pct", db.HitPct, 90)
	want(t, "wal sync ms", db.WALSyncAvgMs, 2)
	if db.WALWriteAvgMs != nil || *db.WALWrites != 0 || !strings.Contains(o.Missing["db.wal_write_avg_ms"], "no WAL write") {
		t.Errorf("no WAL write: avg %v, missing %v", db.WALWriteAvgMs, o.Missing)
	}
}

// Polls a busy machine kept 250 ms apart stand for 250 ms each: a session
// seen in all of them over 2 s counts 2 s, not the 0.8 s that a tenth of
// a second a poll would say.
func TestLatePollsStandForTheTimeBetweenThem(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := fakeSampler(t0, 0, 2)
	s.db = &dbObserver{src: readLatency{}, info: DBInfo{Database: "calibra", WaitView: "the sessions", Limits: map[string]string{}}}
	s.readings[0].db, s.readings[1].db = &dbReading{}, &dbReading{}
	s.waitKeys = []WaitKey{{"CPU", "CPU"}}
	for i := 0; i <= 8; i++ {
		s.polls = append(s.polls, waitPoll{at: t0.Add(time.Duration(i) * 250 * time.Millisecond), counts: []keyCount{{0, 1}}})
	}
	o := s.Window(t0, t0.Add(2*time.Second))
	if len(o.Waits) != 1 || o.Waits[0].Samples != 8 || o.Waits[0].Seconds != 2 {
		t.Fatalf("waits %+v: want the 8 polls after the start, 0.25 s each", o.Waits)
	}
}

// readLatency is a source whose data-file reads take the mean read time.
type readLatency struct{ DBSource }

func (readLatency) WaitLatency(key WaitKey, db *results.ObserveDB) *float64 {
	if key == (WaitKey{"IO", "DataFileRead"}) {
		return db.DataFileReadAvgMs
	}
	return nil
}

func TestDBRatesSayWhyTheyAreAbsent(t *testing.T) {
	a := dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(500)), BlksHit: ptr(int64(10)), BlkReadTime: ptr(100.0)}}
	b := dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(20)), BlksHit: ptr(int64(30)), BlkReadTime: ptr(5.0)}}
	static := map[string]string{"db.client_reads": "PostgreSQL 15 has no pg_stat_io (16+)", "db.wal_writes": "PostgreSQL 13 has no pg_stat_wal (14+)"}
	db, missing := &results.ObserveDB{}, map[string]string{}
	dbRates(a, b, db, static, missing)
	if db.BlksRead != nil || db.DataFileReadAvgMs != nil || !strings.Contains(missing["db.blks_read"], "reset") {
		t.Errorf("a reset: blks_read %v, avg %v, missing %v", db.BlksRead, db.DataFileReadAvgMs, missing)
	}
	if db.BlksHit == nil || *db.BlksHit != 20 || db.ClientReads != nil || db.WALWrites != nil ||
		missing["db.client_reads"] == "" || missing["db.wal_writes"] == "" {
		t.Errorf("blks_hit %v, client reads %v, wal %v, missing %v", db.BlksHit, db.ClientReads, db.WALWrites, missing)
	}

	timingOff := map[string]string{"db.data_file_read_avg_ms": "track_io_timing is off on the server"}
	db, missing = &results.ObserveDB{}, map[string]string{}
	b = dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(600)), BlksHit: ptr(int64(10)), BlkReadTime: ptr(100.0)}}
	dbRates(a, b, db, timingOff, missing)
	if db.DataFileReadAvgMs != nil || *db.BlksRead != 100 || missing["db.data_file_read_avg_ms"] != timingOff["db.data_file_read_avg_ms"] {
		t.Errorf("track_io_timing off: avg %v, reads %v, missing %v", db.DataFileReadAvgMs, db.BlksRead, missing)
	}

	db, missing = &results.ObserveDB{}, map[string]string{}
	dbRates(a, dbReading{err: context.Canceled}, db, nil, missing)
	if db.BlksRead != nil || missing["db"] == "" {
		t.Errorf("a failed reading: %+v, missing %v", db, missing)
	}
}

// TestStartSamplesThisMachine runs the OS sampler on the real /proc for a
// moment.
func TestStartSamplesThisMachine(t *testing.T) {
	s, err := Start(context.Background(), Config{Path: t.TempDir(), Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	from := s.Edge()
	time.Sleep(110 * time.Millisecond)
	to := s.Edge()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	o := s.Window(from, to)
	if !o.From.Equal(from) || !o.To.Equal(to) {
		t.Errorf("window %v to %v, want the Edge readings %v to %v", o.From, o.To, from, to)
	}
	if o.CPUBusyPct == nil && o.Missing["cpu"] == "" {
		t.Errorf("no cpu_busy_pct and no reason: %+v", o)
	}
	if (o.Disk == nil) == (o.Missing["disk"] == "") {
		t.Errorf("disk %+v, missing %v: want one of them", o.Disk, o.Missing)
	}
	if n := len(s.Samples()); n < 3 {
		t.Errorf("%d samples in 110 ms at 20 ms, want at least 3", n)
	}
	if _, err := Start(context.Background(), Config{Proc: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("a proc root without stat: %v, want an error about cpu times", err)
	}
}

// Counters only some engines give: absent without a word where none is
// given; the data-file read time is per file read where those are
// counted; timed waits come out as deltas, most time first.
func TestDBRatesOfInnoDBCounters(t *testing.T) {
	io, sleep := WaitKey{"io/file", "innodb/innodb_data_file"}, WaitKey{"synch/cond", "sql/Item_func_sleep::cond"}
	a := dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(10)), BlksHit: ptr(int64(90)), DataReads: ptr(int64(100)), BlkReadTime: ptr(10.0),
		TimedWaits: map[WaitKey]WaitTotal{io: {N: 100, Ms: 10}}}}
	b := dbReading{DBCounters: DBCounters{BlksRead: ptr(int64(20)), BlksHit: ptr(int64(180)), DataReads: ptr(int64(300)), BlkReadTime: ptr(30.0),
		TimedWaits: map[WaitKey]WaitTotal{io: {N: 300, Ms: 30}, sleep: {N: 2, Ms: 3000}}}}
	db, missing := &results.ObserveDB{}, map[string]string{}
	dbRates(a, b, db, nil, missing)
	if db.DataFileReadAvgMs == nil || *db.DataFileReadAvgMs != 0.1 || *db.DataReads != 200 || db.DataWrites != nil || missing["db.data_writes"] != "" {
		t.Errorf("data reads %v, avg %v (want 20 ms over 200 file reads), writes %v, missing %v", db.DataReads, db.DataFileReadAvgMs, db.DataWrites, missing)
	}
	want := []results.TimedWait{{Class: "synch/cond", Event: "sql/Item_func_sleep::cond", Waits: 2, Seconds: 3, AvgMs: 1500},
		{Class: "io/file", Event: "innodb/innodb_data_file", Waits: 200, Seconds: 0.02, AvgMs: 0.1}}
	if !reflect.DeepEqual(db.TimedWaits, want) {
		t.Errorf("timed waits %+v, want %+v", db.TimedWaits, want)
	}
	b.TimedWaits[io] = WaitTotal{N: 5, Ms: 1}
	db, missing = &results.ObserveDB{}, map[string]string{}
	dbRates(a, b, db, nil, missing)
	if db.TimedWaits != nil || missing["db.timed_waits"] == "" {
		t.Errorf("a reset of the wait counters: %+v, missing %v", db.TimedWaits, missing)
	}
}

// oneConn is a source whose connections read 42 blocks, counting how
// often it was asked for one.
type oneConn struct {
	DBSource
	connects *int
}

func (s oneConn) Connect(context.Context) (DBConn, error) { *s.connects++; return blocksConn{}, nil }

type blocksConn struct{ DBConn }

func (blocksConn) Counters(context.Context) (DBCounters, error) {
	return DBCounters{BlksRead: ptr(int64(42))}, nil
}
func (blocksConn) Close() {}

// A read that failed a moment ago closed the connection: the next tick
// waits out the second before it reconnects (a server that is down costs
// nothing), but a window's edge reconnects at once and reads.
func TestAnEdgeReconnectsAtOnce(t *testing.T) {
	connects := 0
	d := &dbObserver{src: oneConn{connects: &connects}, lastAttempt: time.Now()}
	if r := d.counters(context.Background(), false); r.err == nil || connects != 0 {
		t.Fatalf("a tick a moment after a failed read: %+v, %d connects; want it to wait", r, connects)
	}
	if r := d.counters(context.Background(), true); r.err != nil || connects != 1 || *r.BlksRead != 42 {
		t.Fatalf("an edge a moment after a failed read: %+v, %d connects; want a reading", r, connects)
	}
}
