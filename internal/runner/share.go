package runner

import (
	"fmt"
	"math"
	"slices"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// shareKinds are the steps whose windows state their share of the device
// layer: oltp's (iocal states each point's).
var shareKinds = []string{results.KindOLTP, results.KindRamp, results.KindScale}

// windowShare states a window's device I/O as a share of what the run's
// device step did (observe.device_share), or says why not in its missing,
// and returns the larger share for the verdict: a lower bound of the
// device's load, as the reads and the writes share it (and small writes
// are held against a write point of larger blocks).
func windowShare(o *results.Observe, dev []results.DevicePoint) *verdict.Load {
	if o == nil {
		return nil
	}
	if len(dev) == 0 {
		o.Missing = results.SetMissing(o.Missing, "device_share", "no device step ran before this step in the run: a study with a device step on the same storage states each oltp window as a share of it")
		return nil
	}
	d := o.Disk
	if d == nil {
		return nil // missing says why the disk is
	}
	queue := 1
	if d.QueueSize != nil {
		queue = max(1, int(math.Round(*d.QueueSize)))
	}
	share := &results.DeviceShare{}
	var load *verdict.Load
	if p, ok := nearestFor(dev, d.RIOPS, d.RMBps, queue, func(p results.DevicePoint) bool { return p.ReadPct == 100 && p.RandomPct == 100 }); ok {
		pct := 100 * *d.RIOPS / p.IOPS
		share.ReadIOPS, share.ReadPct = d.RIOPS, ptr1(pct)
		share.ReadOf = fmt.Sprintf("%s at %d outstanding: %.0f IOPS", p.Spec, p.OutstandingIOs, p.IOPS)
		load = &verdict.Load{Pct: *share.ReadPct, Floor: true,
			What: fmt.Sprintf("%.0f reads/s reached the device: %.0f%% of the %s it did at %d outstanding (%.0f IOPS)", *d.RIOPS, pct, p.Spec, p.OutstandingIOs, p.IOPS)}
	}
	if p, ok := nearestFor(dev, d.WIOPS, d.WMBps, queue, func(p results.DevicePoint) bool { return p.ReadPct == 0 && p.MBps > 0 }); ok {
		pct := 100 * *d.WMBps / p.MBps
		share.WriteMBPS, share.WritePct = d.WMBps, ptr1(pct)
		share.WriteOf = fmt.Sprintf("%s at %d outstanding: %.1f MB/s", p.Spec, p.OutstandingIOs, p.MBps)
		if load == nil || *share.WritePct > load.Pct {
			load = &verdict.Load{Pct: *share.WritePct, Floor: true,
				What: fmt.Sprintf("%.1f MB/s written to the device: %.0f%% of the %s it did at %d outstanding (%.1f MB/s)", *d.WMBps, pct, p.Spec, p.OutstandingIOs, p.MBps)}
		}
	}
	if load == nil {
		o.Missing = results.SetMissing(o.Missing, "device_share", "the device step measured no pure random read or write spec to compare the window's I/O with, or the window moved none")
		return nil
	}
	o.DeviceShare = share
	return load
}

// nearestFor is the device point match accepts nearest a window's mean
// I/O size (MB/s over I/Os a second) and its mean queue; ok is false
// when the window did no such I/O.
func nearestFor(dev []results.DevicePoint, iops, mbps *float64, queue int, match func(results.DevicePoint) bool) (results.DevicePoint, bool) {
	if iops == nil || mbps == nil || *iops <= 0 {
		return results.DevicePoint{}, false
	}
	return results.NearestDevicePoint(dev, match, *mbps*1e6 / *iops, queue)
}

// judgeWindow is what limited an oltp window (a step's, or a load's of a
// ramp or scale), with its share of the device layer when kind has one;
// words are the engine's: its log's name and what its waits mean.
func judgeWindow(kind string, o *results.Observe, driver *float64, dev []results.DevicePoint, words terms.Words) (string, *results.Evidence) {
	opts := verdict.Options{Nearest: true, Log: words.Log, Waits: words.WaitKind}
	if slices.Contains(shareKinds, kind) {
		opts.Load = windowShare(o, dev)
	}
	return verdict.DecideWith(o, driver, opts)
}

func ptr1(v float64) *float64 {
	r := math.Round(v*10) / 10
	return &r
}
