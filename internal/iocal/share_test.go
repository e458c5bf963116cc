package iocal

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
	"github.com/calibra-bench/calibra/internal/verdict"
)

var testDevice = []results.DevicePoint{
	{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 1, IOPS: 10000},
	{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 16, IOPS: 80000},
	{Spec: "64k-randread", BlockSize: 65536, ReadPct: 100, RandomPct: 100, OutstandingIOs: 16, IOPS: 9000},
	{Spec: "8k-randrw70", BlockSize: 8192, ReadPct: 70, RandomPct: 100, OutstandingIOs: 16, IOPS: 50000},
	{Spec: "1m-seqwrite", BlockSize: 1 << 20, ReadPct: 0, RandomPct: 0, OutstandingIOs: 1, IOPS: 500, MBps: 500},
}

// Each point is stated as a share of the device point of its pattern at
// the nearest block size, then the nearest outstanding I/Os; a pattern
// the device step did not measure, and a run without one, say so.
func TestDeviceShares(t *testing.T) {
	dev := results.DevicePoints([]results.Step{{Body: &results.OLTP{}}, {Body: &results.Device{Points: testDevice}}})
	for _, c := range []struct {
		test string
		p    results.IOCalPoint
		pct  float64
		spec string
	}{
		{TestRandom, results.IOCalPoint{Jobs: 1, IOPS: 5000}, 50, "4k-randread at 1 outstanding: 10000 IOPS"},
		{TestRandom, results.IOCalPoint{Jobs: 4, IOPS: 20000}, 25, "4k-randread at 16 outstanding: 80000 IOPS"},
		{TestClientRead, results.IOCalPoint{Jobs: 16, IOPS: 40000}, 50, "4k-randread at 16 outstanding: 80000 IOPS"},
		{TestSeqWrite, results.IOCalPoint{Jobs: 4, MBPS: 250}, 50, "1m-seqwrite at 1 outstanding: 500.0 MB/s"},
	} {
		p := c.p
		share(dev, c.test, 8192, &p)
		if p.DeviceSharePct == nil || *p.DeviceSharePct != c.pct || p.DeviceShareOf != c.spec {
			t.Errorf("%s %d jobs: share %v of %q, want %g%% of %q", c.test, p.Jobs, p.DeviceSharePct, p.DeviceShareOf, c.pct, c.spec)
		}
	}
	p := results.IOCalPoint{Jobs: 1, MBPS: 100}
	io := &results.IOCal{SeqRead: &results.IOCalSeq{}, SeqWrite: &results.IOCalSeq{}, Commit: &results.IOCalCommit{}}
	missingShares(io, dev)
	if share(dev, TestSeqRead, 8192, &p); p.DeviceSharePct != nil || io.Missing["seq_read.device_share"] == "" ||
		io.Missing["commit.device_share"] == "" || io.Missing["seq_write.device_share"] != "" {
		t.Errorf("seq read %+v, missing %v", p, io.Missing)
	}
	alone := &results.IOCal{RandomRead: &results.IOCalRandom{}}
	missingShares(alone, nil)
	if alone.Missing["device_share"] == "" {
		t.Errorf("without a device step, missing %v", alone.Missing)
	}
}

// TestVerdictUsesTheDeviceShare: a point whose reads reached 94% of what
// the device did at 16 outstanding is storage though the device's busy
// time says 60%; one at 30% of it, busy 88%, names the CPU, nearest.
func TestVerdictUsesTheDeviceShare(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		diskIOPS, util float64
		want, rule     string
	}{
		{75200, 60, verdict.Storage, "75200 reads/s reached the device: 94% of the 4k-randread it did at 16 outstanding (80000 IOPS)"},
		{24000, 88, verdict.CPU, "yet did 30% of what it did"},
	} {
		o := &results.Observe{WindowS: 1, CPUBusyPct: f(75), Disk: &results.ObserveDisk{RIOPS: f(c.diskIOPS), UtilPct: f(c.util)}}
		r := &runner{data: &data{blockSize: 8192}, env: Env{Device: testDevice, Window: func(time.Time, time.Time) *results.Observe { return o }}}
		jobs := make([]*job, 16)
		for i := range jobs {
			jobs[i] = &job{lat: hist.New(), ops: 10, units: 5000, sum: time.Second}
		}
		p := r.point(TestRandom, jobs, time.Second, time.Time{}, time.Time{}, 0)
		if p.LimitedBy != c.want || !strings.Contains(p.LimitedByEvidence.Rule, c.rule) ||
			p.DeviceSharePct == nil || *p.DeviceSharePct != 100 || p.LimitedByEvidence.DeviceLoadPct == nil {
			t.Errorf("device at %.0f reads/s, busy %.0f%%: %s (%s), share %v", c.diskIOPS, c.util, p.LimitedBy, p.LimitedByEvidence.Rule, p.DeviceSharePct)
		}
	}
}

// A write point, written by the server, gives what the server wrote to
// its data files and WAL and what the device wrote, with its share of
// the device's sequential write, and is never driver, however much CPU
// calibra used: storage when the device wrote 90% of its sequential
// write, wal when WAL writes and syncs took the database's time, else
// another rule with its evidence.
func TestWritePointVerdicts(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		name             string
		deviceMBPS, busy float64
		waits            []results.Wait
		want, rule       string
	}{
		{"the device full", 470, 60, nil, verdict.Storage, "470.0 MB/s written to the device: 94% of the 1m-seqwrite it did at 1 outstanding (500.0 MB/s)"},
		{"WAL waits", 200, 60, []results.Wait{{Class: "LWLock", Event: "WALWrite", SharePct: 30}, {Class: "IO", Event: "WALSync", SharePct: 24}},
			verdict.WAL, "WAL writes and syncs took 54%"},
		{"the CPUs full", 200, 95, nil, verdict.CPU, "the CPUs were busy 95%"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &results.Observe{WindowS: 2, CPUBusyPct: f(c.busy), Waits: c.waits, Disk: &results.ObserveDisk{WMBps: f(c.deviceMBPS), UtilPct: f(40)},
				DB: &results.ObserveDB{DataWriteBytes: n(300e6), WALBytes: n(200e6), WALFPI: n(10)}}
			r := &runner{data: &data{blockSize: 8192}, env: Env{Log: "WAL", Waits: terms.Of(postgres.Name).WaitKind, Device: testDevice, Window: func(time.Time, time.Time) *results.Observe { return o }}}
			jobs := []*job{{lat: hist.New(), ops: 25, bytes: 200e6, sum: time.Second}}
			// calibra at 40% of the machine over the 2 s: a client-side
			// test's driver.
			self := time.Duration(0.4 * 2 * float64(runtime.NumCPU()) * float64(time.Second))
			p := r.point(TestSeqWrite, jobs, 2*time.Second, time.Time{}, time.Time{}, self)
			if p.LimitedBy != c.want || !strings.Contains(p.LimitedByEvidence.Rule, c.rule) {
				t.Errorf("limited by %s (%s), want %s (%s)", p.LimitedBy, p.LimitedByEvidence.Rule, c.want, c.rule)
			}
			if p.MBPS != 100 || *p.DataWMBPS != 150 || *p.WALMBPS != 100 || *p.WALFPIPS != 5 || *p.DiskWMBPS != c.deviceMBPS ||
				*p.DiskWSharePct != 100*c.deviceMBPS/500 || *p.DeviceSharePct != 20 {
				t.Errorf("point %+v: want 100 MB/s of table (20%% of the device), 150 of data files, 100 of WAL, 5 images/s, the device's %.0f MB/s and its share", p, c.deviceMBPS)
			}
		})
	}
}
