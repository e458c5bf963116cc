package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// An oltp window states its device reads and writes as shares of the
// device step's points nearest its mean I/O sizes and queue; the verdict
// gets the larger as a lower bound; without a device step, missing says so.
func TestWindowShare(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	dev := []results.DevicePoint{
		{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 1, IOPS: 16000, MBps: 65.5},
		{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 16, IOPS: 84000, MBps: 344},
		{Spec: "8k-randrw70", BlockSize: 8192, ReadPct: 70, RandomPct: 100, OutstandingIOs: 16, IOPS: 64000, MBps: 524},
		{Spec: "1m-seqwrite", BlockSize: 1 << 20, OutstandingIOs: 1, IOPS: 1500, MBps: 1600},
		{Spec: "1m-seqwrite", BlockSize: 1 << 20, OutstandingIOs: 16, IOPS: 1650, MBps: 1730},
	}
	for _, c := range []struct {
		name        string
		disk        *results.ObserveDisk
		dev         []results.DevicePoint
		read, write string
		load        float64
		missing     string
	}{
		{"reads and writes at a queue of 2", &results.ObserveDisk{RIOPS: f(8000), RMBps: f(65.5), WIOPS: f(2000), WMBps: f(160), QueueSize: f(1.6)}, dev,
			"4k-randread at 1 outstanding: 16000 IOPS", "1m-seqwrite at 1 outstanding: 1600.0 MB/s", 50, ""},
		{"a deep queue of writes alone", &results.ObserveDisk{RIOPS: f(0), WIOPS: f(1600), WMBps: f(1660), QueueSize: f(14)}, dev,
			"", "1m-seqwrite at 16 outstanding: 1730.0 MB/s", 96, ""},
		{"no device step", &results.ObserveDisk{RIOPS: f(10), RMBps: f(0.1)}, nil, "", "", 0, "no device step ran"},
		{"no spec to compare", &results.ObserveDisk{RIOPS: f(10), RMBps: f(0.1)}, dev[2:3], "", "", 0, "measured no pure random read or write spec"},
	} {
		o := &results.Observe{Disk: c.disk}
		load := windowShare(o, c.dev)
		s := o.DeviceShare
		if c.missing != "" {
			if load != nil || s != nil || !strings.Contains(o.Missing["device_share"], c.missing) {
				t.Errorf("%s: load %+v, share %+v, missing %v", c.name, load, s, o.Missing)
			}
			continue
		}
		if s == nil || s.ReadOf != c.read || s.WriteOf != c.write || load == nil || !load.Floor || load.Pct != c.load {
			t.Errorf("%s: share %+v, load %+v; want reads of %q, writes of %q, load %g", c.name, s, load, c.read, c.write, c.load)
		}
	}
}

// An oltp window is judged by the engine's own words for its waits: a
// third engine's log waits make it WAL-bound, in its log's name.
func TestWindowJudgedByTheEnginesWaits(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	words := terms.Words{Log: "journal", WaitKind: func(class, _ string) (string, terms.WaitKind) {
		return class, map[string]terms.WaitKind{"running": terms.OnCPU, "journal-sync": terms.CommitWait}[class]
	}}
	o := &results.Observe{CPUBusyPct: f(40), Waits: []results.Wait{{Class: "running", SharePct: 55}, {Class: "journal-sync", SharePct: 45}}}
	if by, ev := judgeWindow(results.KindOLTP, o, f(3), nil, words); by != verdict.WAL || !strings.Contains(ev.Rule, "journal writes and syncs took 45%") {
		t.Errorf("limited by %s (%s), want wal by the journal's waits", by, ev.Rule)
	}
}
