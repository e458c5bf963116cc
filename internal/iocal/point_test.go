package iocal

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// TestServerSideReadIsNeverDriver: however much CPU calibra used over a
// point of the random test (the server issues its reads), or of the
// sequential read or the commit test, the point's verdict is not driver;
// the same CPU over a clientread point is.
func TestServerSideReadIsNeverDriver(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	o := &results.Observe{WindowS: 1, CPUBusyPct: f(50), Disk: &results.ObserveDisk{UtilPct: f(30), RAwaitMs: f(0.2)},
		DB: &results.ObserveDB{BlksRead: ptr(int64(900)), DataFileReadAvgMs: f(0.3)}}
	r := &runner{data: &data{blockSize: 8192, blocks: []int64{1000}, total: 1000},
		env: Env{Window: func(time.Time, time.Time) *results.Observe { return o }}}
	jobs := []*job{{lat: hist.New(), ops: 4, units: 1024, sum: time.Second}}
	// calibra's CPU: the whole machine's for the whole second.
	self := 64 * time.Second
	for _, test := range []string{TestWAL, TestSeqRead} {
		if p := r.point(test, jobs, time.Second, time.Time{}, time.Time{}, self); p.LimitedBy == verdict.Driver {
			t.Errorf("a server-side %s point is limited by driver: %s", test, p.LimitedByEvidence.Rule)
		}
	}
	p := r.point(TestRandom, jobs, time.Second, time.Time{}, time.Time{}, self)
	if p.LimitedBy == verdict.Driver {
		t.Errorf("a server-side point is limited by driver: %s", p.LimitedByEvidence.Rule)
	}
	if p.IOPS != 1024 || p.RowsPS != 1024 || p.ServerReadsPS == nil || *p.ServerReadsPS != 900 ||
		p.ServerReadMs == nil || *p.ServerReadMs != 0.3 || p.DiskRAwaitMs == nil || *p.DiskRAwaitMs != 0.2 {
		t.Errorf("the reads side by side: %+v", p)
	}
	if p.LatMs == nil || p.LatMs.Mean < 0.97 || p.LatMs.Mean > 0.98 {
		t.Errorf("latency per block %+v, want 1000 ms / 1024 blocks", p.LatMs)
	}
	if p := r.point(TestClientRead, jobs, time.Second, time.Time{}, time.Time{}, self); p.LimitedBy != verdict.Driver {
		t.Errorf("a client-side point with calibra on every CPU is %s", p.LimitedBy)
	}
}

// TestCommitPointTakesTheWALDevice: under --wal-path the commit point's
// device figures are the WAL device's, its WAL rates the server's; its
// verdict weighs the flush, never the cache's hits.
func TestCommitPointTakesTheWALDevice(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	o := &results.Observe{WindowS: 2, CPUBusyPct: f(20),
		Disk:    &results.ObserveDisk{WIOPS: f(5), WAwaitMs: f(9)},
		WALDisk: &results.ObserveDisk{WIOPS: f(1000), WAwaitMs: f(0.5)},
		DB:      &results.ObserveDB{HitPct: f(100), WALSyncs: ptr(int64(2000)), WALWrites: ptr(int64(2000)), WALBytes: ptr(int64(4e6)), WALSyncAvgMs: f(0.4)}}
	r := &runner{data: &data{blockSize: 8192}, env: Env{Log: "WAL", Window: func(time.Time, time.Time) *results.Observe { return o }}}
	jobs := []*job{{lat: hist.New(), ops: 2000, units: 2000, sum: time.Second}}
	p := r.point(TestWAL, jobs, 2*time.Second, time.Time{}, time.Time{}, 0)
	if p.CommitsPS != 1000 || *p.DiskWIOPS != 1000 || *p.DiskWAwaitMs != 0.5 || *p.WALSyncsPS != 1000 || *p.WALMBPS != 2 || *p.ServerSyncMs != 0.4 {
		t.Errorf("commit point %+v", p)
	}
	if p.LimitedBy != verdict.Storage || !strings.Contains(p.LimitedByEvidence.Rule, "the WAL flush took 80% of a commit's time") {
		t.Errorf("a commit spending 0.4 of its 0.5 ms in the WAL sync: %s (%s)", p.LimitedBy, p.LimitedByEvidence.Rule)
	}
	// The point's line names the engine's log in its words.
	if line := pointLine(TestWAL, p, "redo log"); !strings.Contains(line, "1000 commits/s, redo log 2.000 MB/s") {
		t.Errorf("MariaDB's commit point line: %s", line)
	}
	// A commit moves no table data: no mbps, rather than 0 MB/s.
	js, err := json.Marshal(p)
	if err != nil || strings.Contains(string(js), `"mbps"`) {
		t.Errorf("commit point in results.json: %s (%v)", js, err)
	}
}

// A write point whose window's database counters could not be read has
// none of the server's figures and says why, in the observer's words.
func TestAPointWithoutTheServersCountersSaysWhy(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	o := &results.Observe{WindowS: 1, CPUBusyPct: f(90), Disk: &results.ObserveDisk{WMBps: f(600)},
		DB: &results.ObserveDB{}, Missing: map[string]string{"db": "read the counters: timeout: context deadline exceeded"}}
	r := &runner{data: &data{blockSize: 8192}, env: Env{Window: func(time.Time, time.Time) *results.Observe { return o }}}
	jobs := []*job{{lat: hist.New(), ops: 10, units: 10, bytes: 80 << 20, sum: time.Second}}
	p := r.point(TestSeqWrite, jobs, time.Second, time.Time{}, time.Time{}, 0)
	if p.WALMBPS != nil || p.DataWMBPS != nil || p.Missing["db"] != o.Missing["db"] {
		t.Errorf("wal %v, data %v, missing %v: want no server figures, and why", p.WALMBPS, p.DataWMBPS, p.Missing)
	}
	o.Missing = nil
	if p := r.point(TestSeqWrite, jobs, time.Second, time.Time{}, time.Time{}, 0); p.Missing != nil {
		t.Errorf("a point with every counter read says %v is missing", p.Missing)
	}
}

// TestRecordTakesTheServersTimes: an op whose units the server timed
// records each unit's own latency, not the op's time over its units.
func TestRecordTakesTheServersTimes(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name       string
		d          done
		took       time.Duration
		sum        time.Duration
		p99, units int64
	}{
		{"server-timed commits", done{units: 3, lats: []time.Duration{ms, ms, 8 * ms}}, 100 * ms, 10 * ms, 8, 3},
		{"a call of many reads", done{units: 4, bytes: 4 << 13}, 8 * ms, 8 * ms, 2, 4},
		{"one read", done{units: 1}, 3 * ms, 3 * ms, 3, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &job{lat: hist.New()}
			j.record(c.d, c.took)
			if j.sum != c.sum || j.units != c.units || j.ops != 1 || j.bytes != c.d.bytes {
				t.Errorf("sum %s, units %d, ops %d, bytes %d; want %s, %d, 1, %d", j.sum, j.units, j.ops, j.bytes, c.sum, c.units, c.d.bytes)
			}
			if p99 := j.lat.QuantileMs(99); p99 < 0.99*float64(c.p99) || p99 > 1.01*float64(c.p99) {
				t.Errorf("p99 %.3f ms, want %d", p99, c.p99)
			}
		})
	}
}
