package iocal

import (
	"cmp"
	"fmt"
	"runtime"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// point sums up one point: client-side rates and latency over its
// elapsed time, the database's and the OS's view from the observers, and
// what limited it; selfCPU is calibra's own CPU time over the window.
func (r *runner) point(test string, jobs []*job, elapsed time.Duration, from, to time.Time, selfCPU time.Duration) results.IOCalPoint {
	secs := elapsed.Seconds()
	all := hist.New()
	var ops, units, bytes int64
	var sum time.Duration
	for _, j := range jobs {
		all.Merge(j.lat)
		ops += j.ops
		units += j.units
		bytes += j.bytes
		sum += j.sum
	}
	p := results.IOCalPoint{Jobs: len(jobs), Seconds: results.Round(secs, 3), MBPS: results.Round(float64(bytes)/1e6/secs, 2)}
	// Latency per read or commit: a call of the random test holds many,
	// read one after another by its backend.
	if per := max(units, ops); per > 0 {
		p.LatMs = &results.IOCalLatency{Mean: results.Round(sum.Seconds()*1000/float64(per), 3), P99: all.QuantileMs(99)}
	}
	switch test {
	case TestRandom:
		p.IOPS = results.Round(float64(units)/secs, 1)
		p.RowsPS = p.IOPS
	case TestClientRead:
		p.IOPS = results.Round(float64(ops)/secs, 1)
	case TestSeqWrite:
		p.DBPS = results.Round(float64(bytes)/float64(r.data.blockSize)/secs, 1)
	case TestWAL:
		p.CommitsPS = results.Round(float64(units)/secs, 1)
	}
	if r.env.Window == nil {
		share(r.env.Device, test, int64(r.data.blockSize), &p)
		return p
	}
	o := r.env.Window(from, to)
	observed(&p, test, o)
	driver := results.Round(100*selfCPU.Seconds()/(secs*float64(runtime.NumCPU())), 2)
	opts := verdict.Options{ServerSide: serverSide(test), Nearest: true, Writes: test == TestSeqWrite || test == TestWAL,
		Load: share(r.env.Device, test, int64(r.data.blockSize), &p), Log: r.logWord(), Waits: r.env.Waits}
	if test == TestWAL {
		opts.Flush = flushPath(p, r.logWord())
	}
	p.LimitedBy, p.LimitedByEvidence = verdict.DecideWith(o, &driver, opts)
	return p
}

// flushPath is a commit point's flush against its commit: the server's
// mean sync of its log (called log), else the device's write await; nil
// without either.
func flushPath(p results.IOCalPoint, log string) *verdict.Flush {
	if p.LatMs == nil {
		return nil
	}
	switch {
	case p.ServerSyncMs != nil:
		return &verdict.Flush{FlushMs: *p.ServerSyncMs, CommitMs: p.LatMs.Mean, Source: "the server's mean " + log + " sync"}
	case p.DiskWAwaitMs != nil:
		return &verdict.Flush{FlushMs: *p.DiskWAwaitMs, CommitMs: p.LatMs.Mean, Source: "the device's write await"}
	}
	return nil
}

// logWord is the engine's name for its log of changes, the neutral word
// when the run was not told it.
func (r *runner) logWord() string {
	return cmp.Or(r.env.Log, terms.Neutral.Log)
}

// serverSide are the tests whose work the server issues, many blocks,
// rows or commits a call: every test but clientread, whose reads are one
// a query. Calibra's own CPU cannot set their pace.
func serverSide(test string) bool {
	return test != TestClientRead
}

// observed adds to p what the observers saw over its window.
func observed(p *results.IOCalPoint, test string, o *results.Observe) {
	p.CPUBusyPct, p.CPUSysPct = o.CPUBusyPct, o.CPUSysPct
	if why := o.Missing["db"]; why != "" {
		p.Missing = map[string]string{"db": why}
	}
	if d := o.Disk; d != nil {
		p.DiskRIOPS, p.DiskRMBPS, p.DiskWMBPS = d.RIOPS, d.RMBps, d.WMBps
		if test != TestSeqWrite && test != TestWAL {
			p.DiskRAwaitMs = d.RAwaitMs
		}
	}
	switch test {
	case TestWAL:
		committed(p, o)
	case TestSeqWrite:
		written(p, o)
	}
	db := o.DB
	if db == nil {
		return
	}
	p.DBHitPct = db.HitPct
	// Every data-file read where the engine counts them (InnoDB's
	// read-ahead is most of a scan's), else the blocks it read.
	reads := db.BlksRead
	if db.DataReads != nil {
		reads = db.DataReads
	}
	if test != TestSeqWrite && test != TestWAL && reads != nil && o.WindowS > 0 {
		p.DBPS = results.Round(float64(*reads)/o.WindowS, 1)
	}
	if (test == TestRandom || test == TestClientRead) && db.BlksRead != nil && o.WindowS > 0 {
		p.ServerReadsPS = ptr(results.Round(float64(*db.BlksRead)/o.WindowS, 1))
		p.ServerReadMs = db.DataFileReadAvgMs
	}
}

// committed adds the WAL's figures of a commit point: the server's
// writes, syncs and bytes, and its device's writes (the WAL's own device
// under --wal-path, else the data's).
func committed(p *results.IOCalPoint, o *results.Observe) {
	disk := o.Disk
	if o.WALDisk != nil {
		disk = o.WALDisk
	}
	if disk != nil {
		p.DiskWIOPS, p.DiskWAwaitMs = disk.WIOPS, disk.WAwaitMs
	}
	db := o.DB
	if db == nil || o.WindowS <= 0 {
		return
	}
	rate := func(n *int64) *float64 {
		if n == nil {
			return nil
		}
		return ptr(results.Round(float64(*n)/o.WindowS, 1))
	}
	p.WALWritesPS, p.WALSyncsPS = rate(db.WALWrites), rate(db.WALSyncs)
	if db.WALBytes != nil {
		p.WALMBPS = ptr(results.Round(float64(*db.WALBytes)/1e6/o.WindowS, 3))
	}
	p.ServerSyncMs = db.WALSyncAvgMs
}

// written adds what the server wrote over a write point's window: its
// data files' and its WAL's MB/s, and the WAL's full-page images a second,
// each where the engine counts it.
func written(p *results.IOCalPoint, o *results.Observe) {
	db := o.DB
	if db == nil || o.WindowS <= 0 {
		return
	}
	rate := func(n *int64, per float64, places int) *float64 {
		if n == nil {
			return nil
		}
		return ptr(results.Round(float64(*n)/per/o.WindowS, places))
	}
	p.DataWMBPS, p.WALMBPS, p.WALFPIPS = rate(db.DataWriteBytes, 1e6, 2), rate(db.WALBytes, 1e6, 2), rate(db.WALFPI, 1, 1)
}

func pointLine(test string, p results.IOCalPoint, log string) string {
	line := fmt.Sprintf("%s %d jobs: ", test, p.Jobs)
	switch test {
	case TestRandom, TestClientRead:
		line += fmt.Sprintf("%.0f IOPS, ", p.IOPS)
	case TestWAL:
		// The commits move no table data: their rate is the WAL's, where
		// the server counts it, and nothing (not 0) where it does not.
		line += fmt.Sprintf("%.0f commits/s", p.CommitsPS)
		if p.WALMBPS != nil {
			line += fmt.Sprintf(", %s %.3f MB/s", log, *p.WALMBPS)
		}
		return line + pointLatencies(p)
	}
	line += fmt.Sprintf("%.1f MB/s", p.MBPS)
	if test == TestSeqWrite {
		line += pointWrites(p, log)
	}
	return line + pointLatencies(p)
}

// pointWrites is what a write point's server and device wrote, beside its
// table's MB/s.
func pointWrites(p results.IOCalPoint, log string) string {
	line := ""
	for _, w := range []struct {
		what string
		mbps *float64
	}{{"data files", p.DataWMBPS}, {log, p.WALMBPS}, {"device", p.DiskWMBPS}} {
		if w.mbps != nil {
			line += fmt.Sprintf(", %s %.1f MB/s", w.what, *w.mbps)
		}
	}
	if p.WALFPIPS != nil {
		line += fmt.Sprintf(", %.0f full-page images/s", *p.WALFPIPS)
	}
	if p.DiskWSharePct != nil {
		line += fmt.Sprintf(" (%.0f%% of the device's %s)", *p.DiskWSharePct, p.DeviceShareOf)
	}
	return line
}

// pointLatencies are a point's latencies as the client, the server and
// the device saw them.
func pointLatencies(p results.IOCalPoint) string {
	line := ""
	if p.LatMs != nil {
		line += fmt.Sprintf(", latency mean %.3f ms, p99 %.3f ms", p.LatMs.Mean, p.LatMs.P99)
	}
	if p.ServerReadMs != nil {
		line += fmt.Sprintf(", server read %.3f ms", *p.ServerReadMs)
	}
	if p.DiskRIOPS != nil && p.IOPS > 0 {
		line += fmt.Sprintf(", device %.0f reads/s", *p.DiskRIOPS)
	}
	if p.DiskRAwaitMs != nil {
		line += fmt.Sprintf(" (await %.3f ms)", *p.DiskRAwaitMs)
	}
	if p.DiskWAwaitMs != nil {
		line += fmt.Sprintf(", device write await %.3f ms", *p.DiskWAwaitMs)
	}
	return line
}
