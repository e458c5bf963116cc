// What a timed window measured beyond the client's counts: the
// server's figures, calibra's own CPU and the latencies summed.

package oltp

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/results"
)

// serverFigures reads the servers' counters at the window's end and fills
// in what they give (NOPM, tpm_db, checkpoints), or says why they are
// missing: cut says the run was interrupted or failed.
func serverFigures(ctx context.Context, tg *members, cfg RunConfig, ed *edges, out *results.OLTP, tw *timed, users int, cut, failed bool) error {
	win := tw.t1.Sub(tw.t0)
	switch {
	case cut:
		reason := "the run was interrupted"
		if failed {
			reason = "the run failed"
		}
		out.Missing["nopm"] = reason + ": the server's counters at the cut are not exact"
		out.Missing["tpm_db"] = out.Missing["nopm"]
		out.Missing["checkpoints_in_window"] = reason + ": the server's counters were not read at the cut"
		return nil
	case !cfg.Partition.Counters():
		why := fmt.Sprintf("the database's counters are read by the counter partition, 1/%d; 'calibra merge' takes them from there", cfg.Partition.Of)
		for _, k := range []string{"nopm", "tpm_db", "checkpoints_in_window"} {
			out.Missing[k] = why
		}
		return nil
	}
	c1s := tw.c1s
	if c1s == nil {
		var err error
		if c1s, err = tg.counters(ctx, false); err != nil {
			return fmt.Errorf("read counters at the window end: %w", err)
		}
	}
	c0, c1 := tg.sum(tw.c0s), tg.sum(c1s)
	n := nopm(c0, c1, win)
	// calibra's own commits inside the window: each server's start read
	// (and its flush) and the flush calls at the end edge.
	perRead := int64(1)
	if ed.flushStats {
		perRead++
	}
	own := perRead*int64(len(tw.c0s)) + ed.stopFlushes.Load() + tw.gates.own()
	// and autovacuum's, each server's apart (a visit costs each its own).
	var av int64
	avKnown := true
	for k := range c1s {
		n, ok := AutovacuumXacts(tw.c0s[k], c1s[k])
		av, avKnown = av+n, avKnown && ok
	}
	tpm := tpmDB(c0, c1, own+av, win)
	out.Instances = tg.figures(tw.c0s, c1s, perRead, ed.flushStats, users, win)
	out.NOPM, out.TPMDB = &n, &tpm
	noteAutovacuum(out, c0, c1, av, avKnown)
	if c1.NoCheckpoints != "" {
		out.Missing["checkpoints_in_window"] = c1.NoCheckpoints
	} else {
		noteCheckpoints(out, c0.Checkpoints, c1.Checkpoints)
	}
	switch {
	case cfg.KeyingThinking == 1 && cfg.Profile == ProfileSpec:
		e := efficiencyPct(n, cfg.Warehouses)
		out.EfficiencyPct = &e
	case cfg.KeyingThinking == 1:
		out.Missing["efficiency_pct"] = "12.86 NOPM per warehouse is the ceiling of the spec profile's mix, not of " + string(cfg.Profile) + "'s"
	}
	return nil
}

// driverFigures is the load generator's own cost over the window, with
// the lateness of paced starts; nil when no transaction completed.
func driverFigures(out *results.OLTP, cr *crew, tw *timed, cfg RunConfig) *results.DriverCPU {
	win := tw.t1.Sub(tw.t0)
	completed := out.TPMClient * win.Minutes()
	if completed <= 0 {
		return nil
	}
	cpu := (tw.cpu1 - tw.cpu0).Seconds()
	d := &results.DriverCPU{Model: tw.model, Threads: tw.threads, CPUS: results.Round(cpu, 3), CPUUsPerTxn: results.Round(cpu/completed*1e6, 1),
		MachineSharePct: results.Round(100*cpu/(win.Seconds()*float64(runtime.NumCPU())), 2)}
	if kb, why := memPerUserKB(cr.heap0, cr.heap1, len(cr.users)); why != "" {
		out.Missing = results.SetMissing(out.Missing, "driver.mem_per_user_kb", why)
	} else {
		d.MemPerUserKB = kb
	}
	if cr.pollers == nil {
		d.Reason = unpolledReason(cr.sessions)
	}
	if cpu, wakes := pollingCPU(cr.pollers); cpu > 0 {
		d.PollingCPUUsPerTxn = results.Round(cpu.Seconds()/completed*1e6, 1)
		if wakes > 0 {
			d.TxnPerWakeup = results.Round(completed/float64(wakes), 2)
			d.PollingCPUUsPerWakeup = results.Round(cpu.Seconds()/float64(wakes)*1e6, 1)
		}
	}
	if cfg.KeyingThinking > 0 || cfg.RatePerUser > 0 {
		lag, ns := hist.New(), int64(0)
		for _, r := range cr.recs {
			lag.Merge(r.win.lag)
			ns += r.win.lagNs
		}
		if n := lag.Count(); n > 0 {
			l := lag.Summary(float64(ns) / float64(n) / 1e6)
			d.StartLagMs = &l
		}
	}
	return d
}

// unpolledReason is a session's reason for running a goroutine a user
// where its mode polls elsewhere; "" when none gives one.
func unpolledReason(sessions []Session) string {
	for _, s := range sessions {
		if u, ok := s.(Unpolled); ok && u.Unpolled() != "" {
			return u.Unpolled()
		}
	}
	return ""
}

// pollingCPU is the polling threads' own CPU, and their returns from
// epoll_wait, between their sight of the window's start and its end; 0
// with goroutines or when a thread saw neither.
func pollingCPU(pls []*poller) (time.Duration, uint64) {
	var cpu time.Duration
	var wakes uint64
	for _, pl := range pls {
		if pl.cpuBegun > 0 && pl.cpuStopped > pl.cpuBegun {
			cpu += pl.cpuStopped - pl.cpuBegun
			wakes += pl.wakesStopped - pl.wakesBegun
		}
	}
	return cpu, wakes
}

// noteAutovacuum records autovacuum's work in the window where the server
// counts its transactions with calibra's, the transactions tpm_db left out
// for it (xacts), and, when a worker was at work at an edge (!known), that
// tpm_db could not separate its transactions.
func noteAutovacuum(out *results.OLTP, c0, c1 Counters, xacts int64, known bool) {
	if !c1.CountsAutovacuum {
		return
	}
	av := autovacuumIn(c0, c1)
	out.AutovacuumInWindow = &av
	switch {
	case !known:
		out.Missing = results.SetMissing(out.Missing, "autovacuum_xacts", "an autovacuum worker was at work in the benchmark database at an edge of the window, and the server counts its transactions when it exits")
		out.Warnings = append(out.Warnings, fmt.Sprintf("autovacuum worked in the benchmark database across an edge of the window (%d vacuums or analyses finished in it, or workers busy at an edge): "+
			"the server counts its transactions with calibra's, and tpm_db could not take them out: it may read a few dozen above tpm_client", av))
	case xacts > 0:
		out.AutovacuumXacts = &xacts
		out.Notes = append(out.Notes, fmt.Sprintf("autovacuum worked in the benchmark database during the window (%d vacuums or analyses): "+
			"tpm_db leaves out the %d transactions the server counted for it with calibra's", av, xacts))
	default:
		out.AutovacuumXacts = &xacts
	}
}

// noteCheckpoints records the window's checkpoints and warns when there
// were none: the storage then never absorbed the checkpoint's writes, which
// a steady state includes.
func noteCheckpoints(out *results.OLTP, at0, at1 int64) {
	n := at1 - at0
	if n < 0 {
		// InnoDB's log_checkpoints is a value, not a counter: a 4-minute
		// MariaDB window read 22 fewer at its end than at its start.
		out.Missing["checkpoints_in_window"] = fmt.Sprintf("the server's checkpoint count went back over the window (from %d to %d): it cannot say how many began in it", at0, at1)
		return
	}
	out.CheckpointsInWindow = &n
	if n == 0 {
		out.Warnings = append(out.Warnings, "no checkpoint began in the timed window: the figures miss the checkpoint's writes a steady state includes (a longer --duration, 5 min or more, or a more frequent checkpoint setting of the engine)")
	}
}

// summarise merges the window records of the users' recorders into the
// step's metrics, and returns each type's histogram of the window.
func summarise(out *results.OLTP, recs []*recorder, users int, win time.Duration, cfg RunConfig) [numTxTypes]*hist.Histogram {
	var types [numTxTypes]typeStats
	var inputs inputCounts
	var lats [numTxTypes]*hist.Histogram
	for i := range lats {
		lats[i] = hist.New()
	}
	all := hist.New()
	for _, r := range recs {
		inputs.add(r.win.inputs)
		for class, n := range r.win.errClasses {
			if out.ErrorClasses == nil {
				out.ErrorClasses = map[string]int64{}
			}
			out.ErrorClasses[class] += n
		}
		for class, n := range r.win.retries {
			out.Retries = addCount(out.Retries, class, n)
		}
		for i := range types {
			types[i].add(r.win.types[i])
			lats[i].Merge(r.win.lat[i])
			all.Merge(r.win.lat[i])
		}
	}
	out.Transactions = map[string]results.TxStats{}
	out.MixPct = map[string]float64{}
	mix := mixPct(types)
	var completed int64
	for i, s := range types {
		ts := results.TxStats{Count: s.count, Rollbacks: s.rollbacks, Errors: s.errors}
		if s.count > 0 {
			ts.LatMs = lats[i].Summary(float64(s.sumNs) / float64(s.count) / 1e6)
		}
		out.Transactions[TxType(i).String()] = ts
		out.MixPct[TxType(i).String()] = results.Round(mix[i], 2)
		completed += s.count
	}
	out.NewOrderCommits = types[NewOrder].count - types[NewOrder].rollbacks
	out.Checks, out.InvalidReasons = check(types, inputs, cfg.Profile, users, cfg.Warehouses)
	if out.Checks != nil {
		valid := len(out.InvalidReasons) == 0
		out.Valid = &valid
	} else {
		out.Missing["valid"] = "no transaction completed in the timed window"
	}
	var warn string
	if out.Delivery, warn = deliverySkips(types[Delivery].count, inputs.skippedDistricts); warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	out.TPMClient = perMinute(float64(completed), win)
	if cfg.pooled() && completed > 0 {
		queue, waitNs := hist.New(), int64(0)
		for _, r := range recs {
			queue.Merge(r.win.queue)
			waitNs += r.win.waitNs
		}
		q := queue.Summary(float64(waitNs) / float64(completed) / 1e6)
		out.QueueMs = &q
	}
	if a := art(types); !math.IsNaN(a) {
		out.ARTMs = results.Round(a, 3)
		l := all.Summary(a)
		out.LatMs = &l
	} else {
		out.Missing["art_ms"] = "no transaction completed in the timed window"
	}
	return lats
}
