package iocal

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// Each point is stated as a share of the device point of its pattern at
// the nearest block size, then the nearest outstanding I/Os; a pattern
// the device step did not measure, and a run without one, say so.
func TestDeviceShares(t *testing.T) {
	dev := &results.Device{Points: []results.DevicePoint{
		{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 1, IOPS: 10000},
		{Spec: "4k-randread", BlockSize: 4096, ReadPct: 100, RandomPct: 100, OutstandingIOs: 16, IOPS: 80000},
		{Spec: "64k-randread", BlockSize: 65536, ReadPct: 100, RandomPct: 100, OutstandingIOs: 16, IOPS: 9000},
		{Spec: "8k-randrw70", BlockSize: 8192, ReadPct: 70, RandomPct: 100, OutstandingIOs: 16, IOPS: 50000},
		{Spec: "1m-seqwrite", BlockSize: 1 << 20, ReadPct: 0, RandomPct: 0, OutstandingIOs: 1, IOPS: 500, MBps: 500},
	}}
	io := &results.IOCal{BlockSizeBytes: 8192,
		RandomRead: &results.IOCalRandom{Points: []results.IOCalPoint{{Jobs: 1, IOPS: 5000}, {Jobs: 4, IOPS: 20000}, {Jobs: 16, IOPS: 40000}}},
		SeqRead:    &results.IOCalSeq{Points: []results.IOCalPoint{{Jobs: 1, MBPS: 100}}},
		SeqWrite:   &results.IOCalSeq{Points: []results.IOCalPoint{{Jobs: 4, MBPS: 250}}},
		Commit:     &results.IOCalCommit{}}
	DeviceShares(io, []results.Step{{Body: &results.OLTP{}}, {Body: dev}})
	for _, c := range []struct {
		p    results.IOCalPoint
		pct  float64
		spec string
	}{
		{io.RandomRead.Points[0], 50, "4k-randread at 1 outstanding: 10000 IOPS"},
		{io.RandomRead.Points[1], 25, "4k-randread at 16 outstanding: 80000 IOPS"},
		{io.RandomRead.Points[2], 50, "4k-randread at 16 outstanding: 80000 IOPS"},
		{io.SeqWrite.Points[0], 50, "1m-seqwrite at 1 outstanding: 500.0 MB/s"},
	} {
		if c.p.DeviceSharePct == nil || *c.p.DeviceSharePct != c.pct || c.p.DeviceShareOf != c.spec {
			t.Errorf("%d jobs: share %v of %q, want %g%% of %q", c.p.Jobs, c.p.DeviceSharePct, c.p.DeviceShareOf, c.pct, c.spec)
		}
	}
	if io.SeqRead.Points[0].DeviceSharePct != nil || io.Missing["seq_read.device_share"] == "" || io.Missing["commit.device_share"] == "" {
		t.Errorf("seq read %+v, missing %v", io.SeqRead.Points[0], io.Missing)
	}
	alone := &results.IOCal{RandomRead: &results.IOCalRandom{Points: []results.IOCalPoint{{Jobs: 1, IOPS: 5}}}}
	DeviceShares(alone, nil)
	if alone.RandomRead.Points[0].DeviceSharePct != nil || alone.Missing["device_share"] == "" {
		t.Errorf("without a device step: %+v, missing %v", alone.RandomRead.Points[0], alone.Missing)
	}
}
