package iocal

import (
	"fmt"
	"math"

	"github.com/calibra-bench/calibra/internal/results"
)

// DeviceShares states each read and write point as a share of what the
// run's device step did (the steps kept before this one, on the same
// storage: a study's steps share its path) at the nearest access spec
// (the same direction and pattern, the nearest block size) and the
// nearest outstanding I/Os to the point's jobs; missing says why where
// there is nothing to compare with.
func DeviceShares(io *results.IOCal, steps []results.Step) {
	var dev []results.DevicePoint
	for _, st := range steps {
		if d, ok := st.Body.(*results.Device); ok {
			dev = append(dev, d.Points...)
		}
	}
	if len(dev) == 0 {
		io.Missing = missingSet(io.Missing, "device_share", "no device step ran before iocal in this run: a study with a device step on the same storage states each point as a share of it")
		return
	}
	sets := []struct {
		key          string
		points       []results.IOCalPoint
		read, random bool
	}{
		{"random_read", pointsOf(io.RandomRead), true, true},
		{"client_read", pointsOf(io.ClientRead), true, true},
		{"seq_read", seqPointsOf(io.SeqRead), true, false},
		{"seq_write", seqPointsOf(io.SeqWrite), false, false},
	}
	for _, s := range sets {
		for i := range s.points {
			p := &s.points[i]
			d, ok := nearestDevicePoint(dev, s.read, s.random, int64(io.BlockSizeBytes), p.Jobs)
			if !ok {
				io.Missing = missingSet(io.Missing, s.key+".device_share", "the device step measured no "+pattern(s.read, s.random)+" spec")
				break
			}
			if s.random {
				p.DeviceSharePct = ptr(round(100*p.IOPS/d.IOPS, 1))
				p.DeviceShareOf = fmt.Sprintf("%s at %d outstanding: %.0f IOPS", d.Spec, d.OutstandingIOs, d.IOPS)
			} else {
				p.DeviceSharePct = ptr(round(100*p.MBPS/d.MBps, 1))
				p.DeviceShareOf = fmt.Sprintf("%s at %d outstanding: %.1f MB/s", d.Spec, d.OutstandingIOs, d.MBps)
			}
		}
	}
	if io.Commit != nil {
		io.Missing = missingSet(io.Missing, "commit.device_share", "the device step measures no write with a flush after each, which a commit is")
	}
}

// nearestDevicePoint is the device point of the pattern whose block size,
// then outstanding I/Os, are nearest (by ratio) to the database's block
// and the jobs; between two as near, the more outstanding, as the share
// is of what the device can do.
func nearestDevicePoint(dev []results.DevicePoint, read, random bool, block int64, jobs int) (results.DevicePoint, bool) {
	var best results.DevicePoint
	bestBlock, bestLoad := math.Inf(1), math.Inf(1)
	for _, d := range dev {
		if d.ReadPct != all(read) || d.RandomPct != all(random) || d.Errors > 0 || d.IOPS <= 0 || d.BlockSize <= 0 || d.OutstandingIOs <= 0 {
			continue
		}
		b := math.Abs(math.Log2(float64(d.BlockSize) / float64(block)))
		l := math.Abs(math.Log2(float64(d.OutstandingIOs) / float64(jobs)))
		if b < bestBlock || b == bestBlock && (l < bestLoad || l == bestLoad && d.OutstandingIOs > best.OutstandingIOs) {
			best, bestBlock, bestLoad = d, b, l
		}
	}
	return best, !math.IsInf(bestBlock, 1)
}

// all is a spec's share of reads (or of random I/Os) that is wholly so.
func all(yes bool) int {
	if yes {
		return 100
	}
	return 0
}

func pattern(read, random bool) string {
	p := "sequential"
	if random {
		p = "random"
	}
	if read {
		return p + " read"
	}
	return p + " write"
}

func pointsOf(r *results.IOCalRandom) []results.IOCalPoint {
	if r == nil {
		return nil
	}
	return r.Points
}

func seqPointsOf(s *results.IOCalSeq) []results.IOCalPoint {
	if s == nil {
		return nil
	}
	return s.Points
}

func missingSet(m map[string]string, key, why string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = why
	return m
}
