package runner

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/regress"
	"github.com/calibra-bench/calibra/internal/results"
)

// summary prints the end-of-run summary on stderr: status, then each step's
// headline figures with their definitions, then where the results are.
func (e Env) summary(dir *results.Dir, prog *progress.Printer, status string) {
	r, err := results.Load(dir.Path)
	if err != nil {
		return
	}
	text := "\n" + SummaryText(r, status) + fmt.Sprintf("results: %s\n", dir.File("results.json"))
	// The summary is the command's answer, shown whatever --progress says.
	prog.Done()
	fmt.Fprint(e.Stderr, results.TerminalText(text)) // step names are the study's
}

// SummaryText is a run's summary: status, then each step's headline
// figures with their definitions and what limited them, the repeats, the
// warnings and where the time went. The run prints it at its end, and
// 'calibra report' prints it again.
func SummaryText(r *results.Run, status string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Meta.Command, status)
	writeVerdicts(&b, r.Verdicts)
	if r.Baseline != nil {
		_ = regress.Write(&b, r.Baseline, "text")
	}
	for _, st := range r.Steps {
		switch body := st.Body.(type) {
		case *results.OLTP:
			writeOLTPSummary(&b, r.Meta.Engine, st, body)
		case *results.OLTPBuild:
			each := ""
			if body.Instances > 1 {
				each = fmt.Sprintf(" on each of %d instances", body.Instances)
			}
			if body.TotalS == 0 {
				// An interrupted build measured nothing: say so, not 0 MB/s.
				fmt.Fprintf(&b, "  build      %d warehouses%s, not measured (%s)\n", body.Warehouses, each, st.Status)
				break
			}
			fmt.Fprintf(&b, "  build      %d warehouses%s, %.0f MB in %.1f s = %.1f MB/s\n",
				body.Warehouses, each, float64(body.DBBytes)/1e6, body.TotalS, body.MBPerS)
			if body.TemplateKept != "" {
				fmt.Fprintf(&b, "  template   %s\n", body.TemplateKept)
			}
		case *results.Device:
			writeDeviceSummary(&b, st, body)
		case *results.IOCal:
			writeIOCalSummary(&b, st, body)
		case *results.OLTPCheck:
			fmt.Fprintf(&b, "  consistency %s\n", consistencyVerdict(body.Consistency))
		case *results.Ramp:
			writeRampSummary(&b, st, body)
		case *results.Scale:
			writeScaleSummary(&b, st, body)
		case *results.DSSBuild:
			writeDSSBuildSummary(&b, body)
		case *results.DSS:
			writeDSSSummary(&b, st, body)
		case *results.Durability:
			writeDurabilitySummary(&b, body)
		}
		if st.Observe != nil {
			writeDeviceShare(&b, st.Observe.DeviceShare)
		}
		if st.LimitedBy != "" && st.LimitedByEvidence != nil {
			fmt.Fprintf(&b, "  limited by %s: %s\n", st.LimitedBy, st.LimitedByEvidence.Rule)
		}
	}
	writeRepeats(&b, r.Repeats)
	if l := r.Meta.Limits; l != nil && l.NotApplied["limits"] != "" {
		fmt.Fprintf(&b, "  warning    the cache and storage limits were not applied (%s): reads may have come from the page cache; run as root on a machine with cgroups to bound it\n",
			l.NotApplied["limits"])
	}
	if len(r.Steps) > 1 {
		writeTimes(&b, r)
	}
	return b.String()
}

// clusterNodes is the nodes of the cluster the run measured; 0 for any
// other topology.
func clusterNodes(e *results.Engine) int {
	if e == nil {
		return 0
	}
	return e.ClusterNodes
}

func writeOLTPSummary(b *strings.Builder, e *results.Engine, st results.Step, o *results.OLTP) {
	nodes := clusterNodes(e)
	keying := "keying/thinking off"
	if o.KeyingThinking != false {
		keying = fmt.Sprintf("keying/thinking x%v", o.KeyingThinking)
	}
	profile := ""
	if o.Profile != "" {
		profile = ", profile " + o.Profile
	}
	servers := ""
	switch {
	case nodes > 0:
		servers = fmt.Sprintf(" in one database replicated on %d %s nodes", nodes, clusterTitle(e.Name))
	case len(o.Instances) > 1:
		servers = fmt.Sprintf(" on each of %d servers", len(o.Instances))
	}
	fmt.Fprintf(b, "  oltp       %d warehouses%s, %d users, %s mode%s, %s, %.0f s window (%s)\n",
		o.Warehouses, servers, o.Users, o.Mode, profile, keying, o.DurationS, st.Status)
	metric := func(name string, v *float64, unit, def string) {
		if v == nil {
			fmt.Fprintf(b, "  %-10s n/a        %s\n", name, o.Missing[name])
			return
		}
		fmt.Fprintf(b, "  %-10s %10.0f %-3s %s\n", name, *v, unit, def)
	}
	metric("nopm", o.NOPM, "", "committed New-Orders per minute (Δ sum d_next_o_id)")
	metric("tpm_db", o.TPMDB, "", "transactions ended per minute, by the server's own count")
	tc := o.TPMClient
	metric("tpm_client", &tc, "", "transactions completed per minute (client)")
	fmt.Fprintf(b, "  %-10s %10.3f ms  mean %s time of all transactions\n", "art", o.ARTMs, o.LatencyBasis)
	if q := o.QueueMs; q != nil {
		fmt.Fprintf(b, "  %-10s %10.3f ms  mean wait for one of %d connections (p90 %.3f, p99 %.3f ms), inside the latency\n",
			"queue", q.Mean, o.Connections, q.P90, q.P99)
	}
	if d := o.Driver; d != nil {
		writeDriver(b, d)
	}
	if st.Observe != nil {
		for _, r := range st.Observe.Replicas {
			waits := ""
			if r.SyncState == "sync" {
				waits = "; each commit waited for it, inside the latencies below"
			}
			fmt.Fprintf(b, "  standby    %s (%s/%s): flush lag %s ms, replay lag %s ms (mean / max)%s\n",
				r.Name, r.State, r.SyncState, spread(r.FlushLagMs), spread(r.ReplayLagMs), waits)
		}
	}
	word := "server"
	if nodes > 0 {
		word = "node" // NOPM is the shared database's, counted once
	}
	for _, m := range o.Instances {
		fmt.Fprintf(b, "  %-6s %-3d %3d users  nopm %9s  tpm_db %9s  tpm_client %9.0f  art %7.3f ms\n",
			word, m.Instance, m.Users, opt(m.NOPM, "%.0f"), opt(m.TPMDB, "%.0f"), m.TPMClient, m.ARTMs)
	}
	if line := retries(o); line != "" {
		fmt.Fprintf(b, "  %-10s %s\n", "retries", line)
	}
	fmt.Fprintf(b, "  %-13s %8s %6s %9s %9s %9s %9s\n", "transaction", "count", "mix %", "p50 ms", "p90 ms", "p99 ms", "errors")
	for _, name := range results.TxTypes {
		t := o.Transactions[name]
		fmt.Fprintf(b, "  %-13s %8d %6.2f %9.3f %9.3f %9.3f %9d\n", name, t.Count, o.MixPct[name], t.LatMs.P50, t.LatMs.P90, t.LatMs.P99, t.Errors)
	}
	if o.Consistency != nil {
		fmt.Fprintf(b, "  consistency %s\n", consistencyVerdict(o.Consistency))
	}
	writeOLTPValidity(b, o)
	fmt.Fprintf(b, "  %s\n", o.Workload)
}

// writeDriver says what the driver cost: its share of the machine, its CPU
// a transaction, its memory a user and its polling threads.
func writeDriver(b *strings.Builder, d *results.DriverCPU) {
	mem := ""
	if d.MemPerUserKB > 0 {
		mem = fmt.Sprintf(", %.0f KB of heap a user", d.MemPerUserKB)
	}
	threads := ""
	if d.Threads > 0 {
		threads = fmt.Sprintf(", polling on %d thread%s", d.Threads, map[bool]string{true: "s"}[d.Threads > 1])
	}
	if d.PollingCPUUsPerTxn > 0 {
		threads += fmt.Sprintf(" (%.1f µs of it on the polling threads", d.PollingCPUUsPerTxn)
		if d.TxnPerWakeup > 0 {
			threads += fmt.Sprintf(", %.1f transactions and %.1f µs a wake-up", d.TxnPerWakeup, d.PollingCPUUsPerWakeup)
		}
		threads += ")"
	}
	fmt.Fprintf(b, "  %-10s %4.1f%% of the machine, %.1f µs a transaction%s%s\n",
		"driver", d.MachineSharePct, d.CPUUsPerTxn, mem, threads)
}

// writeOLTPValidity says whether the mix and inputs met the specification,
// what the Deliveries skipped, the window's checkpoints, and the warnings.
func writeOLTPValidity(b *strings.Builder, o *results.OLTP) {
	if o.Valid != nil {
		word := "yes: mix minimums (5.2.3) and input bands (9.2.2.5) met"
		if !*o.Valid {
			word = "NO: " + strings.Join(o.InvalidReasons, "; ")
		}
		fmt.Fprintf(b, "  %-10s %s\n", "valid", word)
	}
	if d := o.Delivery; d != nil {
		fmt.Fprintf(b, "  %-10s %d of %d districts skipped (%.2f%%, clause 2.7.4.2)\n", "delivery", d.SkippedDistricts, d.Deliveries*10, d.SkippedPct)
	}
	if o.CheckpointsInWindow != nil {
		fmt.Fprintf(b, "  %-10s %d in the window\n", "checkpoints", *o.CheckpointsInWindow)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(b, "  warning    %s\n", w)
	}
}

// retries says how many of the window's attempts a session ran again
// itself (a Galera node's certification conflicts), by class, and what
// that does to the figures; "" when none was.
func retries(o *results.OLTP) string {
	classes, n, attempts := o.Retried()
	if n == 0 {
		return ""
	}
	var parts []string
	for _, c := range classes {
		parts = append(parts, fmt.Sprintf("%d %s", c.Count, c.Class))
	}
	return fmt.Sprintf("%s: %.0f%% of %d attempts ran again in their session; tpm_db counts every attempt, tpm_client and the latencies each transaction once, its retries inside its time",
		strings.Join(parts, ", "), 100*float64(n)/float64(attempts), attempts)
}

func consistencyVerdict(c *results.Consistency) string {
	if c == nil {
		return "not checked"
	}
	if c.OK {
		return "ok (3.3.2.1 to 3.3.2.4)"
	}
	var bad []string
	for _, ch := range c.Checks {
		if !ch.OK {
			bad = append(bad, ch.ID)
		}
	}
	return "FAILED: " + strings.Join(bad, ", ")
}

// writeVerdicts puts the thresholds first: they decide the exit code.
func writeVerdicts(b *strings.Builder, vs []results.Verdict) {
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(b, "  thresholds\n")
	for _, v := range vs {
		word, value := "pass", "not measured"
		if !v.OK {
			word = "FAIL"
		}
		if v.Value != nil {
			value = fmt.Sprintf("%.4g", *v.Value)
		}
		fmt.Fprintf(b, "    %-4s %-40s %s", word, v.Threshold, value)
		if v.Reason != "" && v.Value != nil {
			fmt.Fprintf(b, " (%s)", v.Reason)
		}
		fmt.Fprintf(b, "  [%s]\n", v.Step)
	}
}

func writeRampSummary(b *strings.Builder, st results.Step, r *results.Ramp) {
	fmt.Fprintf(b, "  ramp       %d warehouses, %s loop, %s mode, SLA %s <= %g ms, %.0f s windows (%s)\n",
		r.Warehouses, r.Loop, r.Mode, r.SLAMetric, r.SLAMs, r.StepDurationS, st.Status)
	fmt.Fprintf(b, "  %8s %10s %10s %10s %12s %8s\n", "users", "tps", "art ms", "p90 ms", "little users", "sla")
	for _, s := range r.Steps {
		little := ""
		if s.LittleUsers != nil {
			little = fmt.Sprintf("%.1f", *s.LittleUsers)
		}
		fmt.Fprintf(b, "  %8d %10.1f %10.2f %10.2f %12s %8s\n", s.Users, s.TPS, s.ARTMs, s.P90Ms, little, map[bool]string{true: "within", false: "over"}[s.WithinSLA])
	}
	fmt.Fprintf(b, "  max_tps %s, max_users_within_sla %s", opt(r.MaxTPS, "%.1f"), r.UsersWithinSLA())
	if r.ARTAtUsers != nil {
		fmt.Fprintf(b, ", ART at %d users %s", *r.ARTAtUsers, opt(r.ARTAtMs, "%.2f ms"))
	}
	fmt.Fprintf(b, "; stopped: %s\n", r.StopReasonText())
}

// writeRepeats prints the median and spread of each repeated step's
// headline metrics.
func writeRepeats(b *strings.Builder, reps []results.Repeats) {
	for _, rep := range reps {
		fmt.Fprintf(b, "  repeats    %s: %d runs, median [min .. max] spread\n", rep.Name, rep.N)
		for _, m := range rep.Metrics {
			spread := "n/a"
			if m.SpreadPct != nil {
				spread = fmt.Sprintf("%.1f%%", *m.SpreadPct)
			}
			fmt.Fprintf(b, "    %-22s %12.4g [%.4g .. %.4g] %s\n", m.Name, m.Median, m.Min, m.Max, spread)
		}
	}
}

// writeTimes says where the time went, step by step.
func writeTimes(b *strings.Builder, r *results.Run) {
	fmt.Fprintf(b, "  time       ")
	var total time.Duration
	for i, st := range r.Steps {
		if st.FinishedAt == nil {
			continue
		}
		d := st.FinishedAt.Sub(st.StartedAt)
		total += d
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %s", st.Kind, d.Round(time.Second))
	}
	if r.FinishedAt != nil {
		fmt.Fprintf(b, "; run %s", r.FinishedAt.Sub(r.StartedAt).Round(time.Second))
	}
	b.WriteString("\n")
}

// writeDeviceSummary prints a device step: its setup, a line per point,
// and per spec the IOPS within the latency bound.
func writeDeviceSummary(b *strings.Builder, st results.Step, d *results.Device) {
	fmt.Fprintf(b, "  device     %s %s, %s, %d target(s) x %d worker(s) x %s, %.0f s runs after %.0f s ramp, x%d (%s)\n",
		d.FioVersion, d.IOEngine, device.IOMode(d.Direct), len(d.Targets), d.WorkersPerTarget, device.FormatSize(d.SizeBytes), d.RuntimeS, d.RampS, d.Repeats, st.Status)
	writeDeviceMethod(b, d)
	fmt.Fprintf(b, "  %-14s %4s %10s %9s %9s %9s %9s %9s %9s %9s %7s  (latency: completion, µs)\n",
		"spec", "qd", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "p99.99", "max", "errors")
	for _, p := range d.Points {
		fmt.Fprintf(b, "  %-14s %4d %10.0f %9.1f %s %7d\n", p.Spec, p.QD, p.IOPS, p.MBps, latencyColumns(p.LatUs), p.Errors)
		if ss := p.SteadyState; ss != nil {
			fmt.Fprintf(b, "  %-14s      %s\n", "", steadyLine(ss))
		}
		if bu := p.Burst; bu != nil {
			fmt.Fprintf(b, "  %-14s      %s\n", "", burstLine(bu, p.LimitedBy))
		}
		if f := p.HostLimitedFall; f != nil && f.Host != nil {
			fmt.Fprintf(b, "  %-14s      the rate fell %d s in (counted from the start of %s), from %.0f to %.0f IOPS, as other loads' CPU rose from %.0f%% to %.0f%% of the machine and the device answered as fast as before: host-limited, not a burst\n",
				"", f.FellAtS, f.Raw, f.PeakIOPS, f.SettledIOPS, f.Host.OutsidePctBefore, f.Host.OutsidePctAfter)
		}
	}
	bound := device.FormatMicros(d.MaxLatencyUs)
	for _, s := range d.Specs {
		judged := "p99 ≤ " + bound
		if s.JudgedOn == "mbps" {
			judged = "max MB/s"
		}
		if s.AtMaxLatency == nil {
			fmt.Fprintf(b, "  %s  %-14s n/a: %s\n", judged, s.Name, s.AtMaxLatencyMissing)
			continue
		}
		m := s.AtMaxLatency
		fmt.Fprintf(b, "  %s  %-14s %.0f IOPS, %.1f MB/s at qd %d (p99 %s)", judged, s.Name, m.IOPS, m.MBps, m.QD, device.FormatMicros(m.P99Us))
		if m.LimitedBy != "" {
			fmt.Fprintf(b, ", limited by %s", m.LimitedBy)
		}
		fmt.Fprintln(b)
	}
	writeAtBounds(b, d)
	for _, n := range d.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

// writeAtBounds prints each spec's IOPS at p99 within each bound, over
// its sweep of outstanding I/O.
func writeAtBounds(b *strings.Builder, d *results.Device) {
	for _, s := range d.Specs {
		for _, a := range s.IOPSAtP99 {
			head := fmt.Sprintf("  IOPS at p99 ≤ %s  %-14s", device.FormatMicros(a.BoundUs), s.Name)
			if a.Point == nil {
				fmt.Fprintf(b, "%s n/a: %s\n", head, a.Missing)
				continue
			}
			fmt.Fprintf(b, "%s %.0f IOPS at qd %d, %d outstanding (p99 %s)\n", head, a.Point.IOPS, a.Point.QD, a.OutstandingIOs, device.FormatMicros(a.Point.P99Us))
		}
	}
}

// writeDeviceMethod says how far the figures are from the device's steady
// state: a first look, or the PTS method they were held to.
func writeDeviceMethod(b *strings.Builder, d *results.Device) {
	m := d.SteadyState
	if m == nil {
		b.WriteString("  method     fresh out of box: a first look, not steady state (each point one run on a region written once)\n")
		return
	}
	fmt.Fprintf(b, "  method     steady state (SNIA PTS): %s per worker preconditioned in %s sequential writes, rounds of %.0f s, window %d rounds, range ≤ %.0f%%, slope ≤ %.0f%%, at most %d rounds\n",
		device.FormatSize(m.PreconditionBytes), device.FormatSize(m.PreconditionBlock), m.RoundS, m.WindowRounds, m.RangeLimitPct, m.SlopeLimitPct, m.MaxRounds)
}

// steadyLine is a point's steady-state judgement in one line.
func steadyLine(s *results.DeviceSteady) string {
	verdict := fmt.Sprintf("steady at round %d", s.Round)
	if !s.Reached {
		verdict = fmt.Sprintf("NOT steady after %d rounds", len(s.RoundsIOPS))
	}
	return fmt.Sprintf("%s: window range %s, slope %s of its mean %.0f IOPS", verdict, pctText(s.RangePct), pctText(s.SlopePct), s.WindowMeanIOPS)
}

// burstLine says where a point's rate fell, and to what.
// Another load on the host can make a rate fall as a full cache does: a
// point limited by the host says so.
func burstLine(bu *results.DeviceBurst, limitedBy string) string {
	line := fmt.Sprintf("burst: the rate fell %d s in (counted from the start of %s), from %.0f to %.0f IOPS (-%.0f%%)",
		bu.FellAtS, bu.Raw, bu.PeakIOPS, bu.SettledIOPS, bu.DropPct)
	if bu.WrittenBytesBeforeFall > 0 {
		line += ", after " + device.FormatSize(bu.WrittenBytesBeforeFall) + " written"
	}
	if limitedBy == "host" {
		line += "; another load on the host limited this point and may be why"
	}
	return line
}

func pctText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// latencyColumns are a point's six latency columns; n/a when no I/O
// completed.
func latencyColumns(l *results.DeviceLatency) string {
	if l == nil {
		return strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%9s ", "n/a"), 6), " ")
	}
	p9999 := fmt.Sprintf("%9s", "n/a") // runs before it was kept
	if l.P9999 != nil {
		p9999 = fmt.Sprintf("%9.1f", *l.P9999)
	}
	return fmt.Sprintf("%9.1f %9.1f %9.1f %9.1f %s %9.1f", l.Mean, l.P50, l.P99, l.P999, p9999, l.Max)
}

// writeDeviceShare prints a window's device I/O as a share of the run's
// device step.
func writeDeviceShare(b *strings.Builder, s *results.DeviceShare) {
	if s == nil {
		return
	}
	var parts []string
	if s.ReadPct != nil {
		parts = append(parts, fmt.Sprintf("reads %.0f/s, %.0f%% of the device's %s", *s.ReadIOPS, *s.ReadPct, s.ReadOf))
	}
	if s.WritePct != nil {
		parts = append(parts, fmt.Sprintf("writes %.1f MB/s, %.0f%% of the device's %s", *s.WriteMBPS, *s.WritePct, s.WriteOf))
	}
	fmt.Fprintf(b, "  device     %s\n", strings.Join(parts, "; "))
}

// writeIOCalSummary prints an iocal step: the headline figures, a line per
// point, and whether caches may dominate.
func writeIOCalSummary(b *strings.Builder, st results.Step, o *results.IOCal) {
	method := ""
	if o.IOMethod != "" {
		method = ", io_method " + o.IOMethod
	}
	fmt.Fprintf(b, "  iocal      %s of data in %d-byte blocks, %.0f s points%s (%s)\n",
		device.FormatSize(o.DataBytes), o.BlockSizeBytes, o.PointS, method, st.Status)
	line := func(test string, p results.IOCalPoint) {
		iops := "n/a" // a sequential point measures MB/s and blocks, not I/Os
		if test == "random" || test == "clientread" {
			iops = fmt.Sprintf("%.0f", p.IOPS)
		}
		lat := "n/a"
		if p.LatMs != nil {
			lat = fmt.Sprintf("%9.3f %9.3f", p.LatMs.Mean, p.LatMs.P99)
		}
		dev := "n/a"
		if p.DiskRIOPS != nil {
			dev = fmt.Sprintf("%.0f", *p.DiskRIOPS)
		}
		share, of := "n/a", ""
		if p.DeviceSharePct != nil {
			share, of = fmt.Sprintf("%.0f%%", *p.DeviceSharePct), "  (of the device's "+p.DeviceShareOf+")"
		}
		if p.DiskWMBPS != nil && p.DiskWSharePct != nil {
			of += fmt.Sprintf("; the device wrote %.1f MB/s, %.0f%% of it", *p.DiskWMBPS, *p.DiskWSharePct)
		}
		fmt.Fprintf(b, "  %-9s %5d %10s %10.0f %10s %9.1f %9s %s  %s%s\n", test, p.Jobs, iops, p.DBPS, dev, p.MBPS, share, lat, p.LimitedBy, of)
	}
	fmt.Fprintf(b, "  %-9s %5s %10s %10s %10s %9s %9s %9s %9s  %s  (latency ms)\n", "test", "jobs", "IOPS", "blocks/s", "device r/s", "MB/s", "of device", "mean", "p99", "limited by")
	if why := o.Missing["device_share"]; why != "" {
		fmt.Fprintf(b, "  of device n/a: %s\n", why)
	}
	for _, t := range []struct {
		name, key, label string
		r                *results.IOCalRandom
	}{{"random", "random_read", "max_iops", o.RandomRead}, {"clientread", "client_read", "client max", o.ClientRead}} {
		r := t.r
		if r == nil {
			continue
		}
		for _, p := range r.Points {
			line(t.name, p)
		}
		if r.MaxIOPS != nil {
			fmt.Fprintf(b, "  %-10s %.0f at mean latency %.3f ms (bound %g ms)", t.label, *r.MaxIOPS, *r.LatencyMsAtMax, r.MaxLatencyMs)
			if r.DeviceIOPSAtMax != nil {
				fmt.Fprintf(b, ", %.0f reads/s reached the device", *r.DeviceIOPSAtMax)
			}
		} else {
			fmt.Fprintf(b, "  %-10s n/a: %s", t.label, o.Missing[t.key+".max_iops"])
		}
		if r.SaturationJobs != nil {
			fmt.Fprintf(b, ", saturation at %d jobs", *r.SaturationJobs)
		}
		fmt.Fprintln(b)
	}
	for _, s := range []struct {
		name string
		seq  *results.IOCalSeq
	}{{"seqread", o.SeqRead}, {"seqwrite", o.SeqWrite}} {
		if s.seq == nil {
			continue
		}
		for _, p := range s.seq.Points {
			line(s.name, p)
		}
		fmt.Fprintf(b, "  %-9s max %.1f MB/s\n", s.name, s.seq.MaxMBPS)
	}
	writeCommitSummary(b, o.Commit)
	if o.CacheDominated != "" {
		fmt.Fprintf(b, "  cache-dominated: %s\n", o.CacheDominated)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(b, "  warning: %s\n", w)
	}
}

// writeCommitSummary prints iocal's commit test: a line per committer
// count, the server's WAL syncs and the device's write await beside it.
func writeCommitSummary(b *strings.Builder, c *results.IOCalCommit) {
	if c == nil {
		return
	}
	opt := func(v *float64, format string) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf(format, *v)
	}
	fmt.Fprintf(b, "  %-9s %5s %10s %9s %9s %11s %11s  %s  (latency ms)\n", "wal", "jobs", "commits/s", "mean", "p99", "wal syncs/s", "dev w await", "limited by")
	for _, p := range c.Points {
		mean, p99 := "n/a", "n/a"
		if p.LatMs != nil {
			mean, p99 = fmt.Sprintf("%.3f", p.LatMs.Mean), fmt.Sprintf("%.3f", p.LatMs.P99)
		}
		fmt.Fprintf(b, "  %-9s %5d %10.0f %9s %9s %11s %11s  %s\n", "wal", p.Jobs, p.CommitsPS, mean, p99,
			opt(p.WALSyncsPS, "%.0f"), opt(p.DiskWAwaitMs, "%.3f"), p.LimitedBy)
	}
	fmt.Fprintf(b, "  wal       max %.0f commits/s", c.MaxCommitsPS)
	if l := c.LatencyMsAtOne; l != nil {
		fmt.Fprintf(b, ", one committer %.3f ms mean, %.3f ms p99", l.Mean, l.P99)
	}
	fmt.Fprintln(b)
}

func writeDSSBuildSummary(b *strings.Builder, o *results.DSSBuild) {
	rows := "match the specification"
	if !o.RowCheck.OK {
		rows = "DIFFER: " + o.RowCheck.Detail
	}
	fmt.Fprintf(b, "  dss build  SF %g, %.0f MB in %.1f s = %.1f MB/s (load %.1f s, indexes %.1f s, analyze %.1f s); row counts %s\n",
		o.ScaleFactor, float64(o.DBBytes)/1e6, o.TotalS, o.MBPerS, o.LoadS, o.IndexS, o.AnalyzeS, rows)
}

func writeDSSSummary(b *strings.Builder, st results.Step, o *results.DSS) {
	parallel := "parallelism not recorded"
	if v, ok := o.Parallelism["max_parallel_workers_per_gather"]; ok {
		parallel = "max_parallel_workers_per_gather " + v
	} else if v, ok := o.Parallelism["query_parallelism"]; ok {
		parallel = "parallelism " + v
	}
	fmt.Fprintf(b, "  dss        SF %g, %s (%s)\n", o.ScaleFactor, parallel, st.Status)
	indicative := o.Valid != nil && !*o.Valid
	metric := func(name string, v *float64, format, def string) {
		label := name
		if indicative && name == "qphh" {
			label += " (indicative)" // Power@Size and Throughput@Size too: the lines below say why
		}
		if v == nil {
			fmt.Fprintf(b, "  %-18s n/a        %s\n", label, o.Missing[name])
			return
		}
		fmt.Fprintf(b, "  %-18s "+format+"  %s\n", label, *v, def)
	}
	if p := o.Power; p != nil {
		metric("geomean_s", p.GeomeanS, "%10.3f s", "geometric mean of the power test's 22 query times")
		metric("power_at_size", p.PowerAtSize, "%10.1f  ", "3600 x SF / geomean of 22 queries + 2 refreshes, each rounded to 0.1 s")
	}
	if th := o.Throughput; th != nil {
		fmt.Fprintf(b, "  %-18s %10.1f s  %d query streams and a refresh stream\n", "throughput elapsed", th.ElapsedS, th.Streams)
		metric("throughput_at_size", th.ThroughputAtSize, "%10.1f  ", "S x 22 x 3600 / elapsed x SF")
	}
	if o.Power != nil && o.Throughput != nil {
		metric("qphh", o.QphH, "%10.1f  ", "sqrt(Power@Size x Throughput@Size)")
	}
	if indicative {
		for _, why := range o.InvalidReasons {
			fmt.Fprintf(b, "  %-18s %s\n", "indicative", why)
		}
	}
	storage := func(test string, d *results.Observe) {
		if d != nil && d.Disk != nil && d.Disk.RMBps != nil && d.Disk.WMBps != nil {
			fmt.Fprintf(b, "  %-18s %10.1f MB/s read, %.1f MB/s written over the %s\n", "storage", *d.Disk.RMBps, *d.Disk.WMBps, test)
		}
	}
	if o.Power != nil {
		storage("power test", o.Power.Observe)
	}
	if o.Throughput != nil {
		storage("throughput test", o.Throughput.Observe)
	}
	fmt.Fprintf(b, "  %s\n", o.Workload)
}

// durabilityOutcomes is how many cycles had each outcome, in the order of
// durability.Classes, e.g. "durable 1, lost-acknowledged 1".
func durabilityOutcomes(d *results.Durability) string {
	var parts []string
	for _, c := range durability.Classes {
		if n := d.Outcomes[string(c)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

// durabilityNodes says, for a cluster, how many nodes were checked after
// each recovery, whether they agreed, and how the joiners came back; ""
// for one server.
func durabilityNodes(d *results.Durability) string {
	nodes, ist, copies := 0, 0, 0
	var differ []string
	for _, c := range d.PerCycle {
		nodes = max(nodes, len(c.Nodes))
		for _, n := range c.Nodes {
			switch {
			case n.Rejoined == "ist":
				ist++
			case strings.HasPrefix(n.Rejoined, "copy"):
				copies++
			}
			if n.Differs != "" {
				differ = append(differ, fmt.Sprintf("cycle %d node %d", c.Cycle, n.Node))
			}
		}
	}
	if nodes == 0 {
		return ""
	}
	agree := "each holding node 1's data"
	if len(differ) > 0 {
		agree = "differing from node 1: " + strings.Join(differ, ", ")
	}
	return fmt.Sprintf("%d checked after each recovery, %s; joiners back by IST %d times, by calibra's copy %d", nodes, agree, ist, copies)
}

func writeDurabilitySummary(b *strings.Builder, d *results.Durability) {
	kind := "power cut (the storage and the database server killed)"
	if d.PowerCut == "server" {
		kind = "server crash only (not a test of the storage)"
	}
	if d.Calibration {
		kind += ", calibration with commits not flushed (" + d.UnsafeSettings + ")"
	}
	fmt.Fprintf(b, "  durability %d cycles of %s, %d clients, %.0f s of commits each\n", d.Cycles, kind, d.Clients, d.LoadS)
	fmt.Fprintf(b, "  %-10s %10d     acknowledged commits missing after a recovery (the violation) of %d acknowledged\n", "lost", d.LostAcknowledged, d.Acknowledged)
	fmt.Fprintf(b, "  %-10s %10d     acknowledged commits that could not be verified (the database did not come back, or could not be read)\n", "unverified", d.UnverifiableAcknowledged)
	fmt.Fprintf(b, "  %-10s %10d     acknowledged commits checked and present\n", "present", d.PresentAcknowledged)
	fmt.Fprintf(b, "  %-10s %10d     committed but never acknowledged (in flight at the cut; allowed)\n", "in flight", d.CommittedUnacknowledged)
	if d.PageCheck != "" {
		fmt.Fprintf(b, "  %-10s %10d     pages damaged after the recoveries (%s)\n", "pages", d.PagesDamaged, d.PageCheck)
	}
	for _, c := range d.Matrix {
		perCommit := "n/a"
		if c.BytesPerCommit != nil {
			perCommit = fmt.Sprintf("%.1f KiB", *c.BytesPerCommit/1024)
		}
		fmt.Fprintf(b, "  matrix     %-24s %-14s %d cycles, %d of %d acknowledged lost, %d pages damaged, %s written per commit\n",
			c.Protection, c.Cut, c.Cycles, c.LostAcknowledged, c.Acknowledged, c.PagesDamaged, perCommit)
	}
	for _, f := range d.Findings {
		fmt.Fprintf(b, "  finding    %s\n", f)
	}
	var violated []string
	checked := 0
	for _, c := range d.PerCycle {
		if c.Consistency != nil {
			checked++
			if !c.Consistency.OK {
				violated = append(violated, strconv.Itoa(c.Cycle))
			}
		}
	}
	if checked > 0 {
		verdict := fmt.Sprintf("hold after all %d recoveries checked", checked)
		if len(violated) > 0 {
			verdict = "violated after the recovery of cycle " + strings.Join(violated, ", ")
		}
		fmt.Fprintf(b, "  %-10s %10s     TPC-C consistency conditions (3.3.2.1-4) %s\n", "consistent", map[bool]string{true: "yes", false: "no"}[len(violated) == 0], verdict)
	}
	if o := durabilityOutcomes(d); o != "" {
		fmt.Fprintf(b, "  %-10s %s\n", "outcomes", o)
	}
	if n := durabilityNodes(d); n != "" {
		fmt.Fprintf(b, "  %-10s %s\n", "nodes", n)
	}
	if d.RecoveryS != nil {
		fmt.Fprintf(b, "  %-10s %10.1f s   the slowest recovery (file system check, mount, database crash recovery)\n", "recovery", *d.RecoveryS)
	}
	if f := d.Flush; f != nil {
		fmt.Fprintf(b, "  %-10s %10.0f /s  fsyncs at queue depth 1: %s\n", "flushes", f.FsyncsPerS, f.Verdict)
	}
	if d.Note != "" {
		fmt.Fprintf(b, "  note       %s\n", d.Note)
	}
}

// opt formats a figure, or says "n/a" where it was not measured.
func opt(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}

func writeScaleSummary(b *strings.Builder, st results.Step, sc *results.Scale) {
	fmt.Fprintf(b, "  scale      %d users, %d warehouses on each server, %s mode (%s)\n", sc.Users, sc.Warehouses, sc.Mode, st.Status)
	for _, p := range sc.Points {
		fmt.Fprintf(b, "  servers %-3d nopm %9s  tpm_db %9s  art %7.3f ms  p90 %7.3f ms  disk await %s ms  limited by %s\n",
			p.Servers, opt(p.NOPM, "%.0f"), opt(p.TPMDB, "%.0f"), p.ARTMs, p.P90Ms, opt(p.DiskAwaitMs, "%.3f"), cmp.Or(p.LimitedBy, "-"))
	}
}

// spread is a mean and maximum, or "n/a".
func spread(s *results.Spread) string {
	if s == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f / %.2f", s.Mean, s.Max)
}
