package iocal

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// spec is the device spec a test's points compare with: the same
// direction and pattern; ok is false for the commit test, as the device
// step runs no write with a flush after each.
func spec(test string) (read, random, ok bool) {
	switch test {
	case TestRandom, TestClientRead:
		return true, true, true
	case TestSeqRead:
		return true, false, true
	case TestSeqWrite:
		return false, false, true
	}
	return false, false, false
}

// share states p as a share of the device point nearest its test's spec
// (device_share_pct, device_share_of), and returns for the verdict what
// reached the device over p's window (its own counters) against the same
// point; nil where there is no device point, or no device counter.
func share(dev []results.DevicePoint, test string, block int64, p *results.IOCalPoint) *verdict.Load {
	read, random, ok := spec(test)
	if !ok {
		return nil
	}
	d, ok := nearestDevicePoint(dev, read, random, block, p.Jobs)
	if !ok || !random && d.MBps <= 0 {
		return nil
	}
	at := fmt.Sprintf("the %s it did at %d outstanding", d.Spec, d.OutstandingIOs)
	if random {
		p.DeviceSharePct = ptr(results.Round(100*p.IOPS/d.IOPS, 1))
		p.DeviceShareOf = fmt.Sprintf("%s at %d outstanding: %.0f IOPS", d.Spec, d.OutstandingIOs, d.IOPS)
		if p.DiskRIOPS == nil {
			return nil
		}
		return &verdict.Load{Pct: results.Round(100**p.DiskRIOPS/d.IOPS, 1),
			What: fmt.Sprintf("%.0f reads/s reached the device: %.0f%% of %s (%.0f IOPS)", *p.DiskRIOPS, 100**p.DiskRIOPS/d.IOPS, at, d.IOPS)}
	}
	p.DeviceSharePct = ptr(results.Round(100*p.MBPS/d.MBps, 1))
	p.DeviceShareOf = fmt.Sprintf("%s at %d outstanding: %.1f MB/s", d.Spec, d.OutstandingIOs, d.MBps)
	// The device's own MB/s: a write point writes its WAL besides the table.
	mbps, what := p.DiskRMBPS, "read from"
	if !read {
		mbps, what = p.DiskWMBPS, "written to"
	}
	if mbps == nil {
		return nil
	}
	if !read {
		p.DiskWSharePct = ptr(results.Round(100**mbps/d.MBps, 1))
	}
	return &verdict.Load{Pct: results.Round(100**mbps/d.MBps, 1),
		What: fmt.Sprintf("%.1f MB/s %s the device: %.0f%% of %s (%.1f MB/s)", *mbps, what, 100**mbps/d.MBps, at, d.MBps)}
}

// missingShares says, once, why points carry no device share: no device
// step ran, or it measured no spec of a test's pattern; the commit test
// never has one.
func missingShares(io *results.IOCal, dev []results.DevicePoint) {
	if len(dev) == 0 {
		io.Missing = results.SetMissing(io.Missing, "device_share", "no device step ran before iocal in this run: a study with a device step on the same storage states each point as a share of it")
		return
	}
	for _, s := range []struct {
		key, test string
		ran       bool
	}{{"random_read", TestRandom, io.RandomRead != nil}, {"client_read", TestClientRead, io.ClientRead != nil},
		{"seq_read", TestSeqRead, io.SeqRead != nil}, {"seq_write", TestSeqWrite, io.SeqWrite != nil}} {
		read, random, _ := spec(s.test)
		if _, ok := nearestDevicePoint(dev, read, random, 1, 1); s.ran && !ok {
			io.Missing = results.SetMissing(io.Missing, s.key+".device_share", "the device step measured no "+pattern(read, random)+" spec")
		}
	}
	if io.Commit != nil {
		io.Missing = results.SetMissing(io.Missing, "commit.device_share", "the device step measures no write with a flush after each, which a commit is")
	}
}

// nearestDevicePoint is the device point of the pattern nearest the
// database's block and the jobs (results.NearestDevicePoint).
func nearestDevicePoint(dev []results.DevicePoint, read, random bool, block int64, jobs int) (results.DevicePoint, bool) {
	return results.NearestDevicePoint(dev, func(d results.DevicePoint) bool {
		return d.ReadPct == all(read) && d.RandomPct == all(random)
	}, float64(block), jobs)
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
