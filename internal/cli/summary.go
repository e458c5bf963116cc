package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// summary prints the end-of-run summary on stderr: status, then each step's
// headline figures with their definitions, then where the results are.
func (a *app) summary(dir *results.Dir, prog *progress.Printer, status string) {
	r, err := results.Load(dir.Path)
	if err != nil {
		return
	}
	text := "\n" + summaryText(r, status) + fmt.Sprintf("results: %s\n", dir.File("results.json"))
	// The summary is the command's answer, shown whatever --progress says.
	prog.Done()
	fmt.Fprint(a.stderr, text)
}

// summaryText is a run's summary: status, then each step's headline
// figures with their definitions and what limited them, the repeats, the
// warnings and where the time went. The run prints it at its end, and
// 'calibra report' prints it again.
func summaryText(r *results.Run, status string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.Meta.Command, status)
	writeVerdicts(&b, r.Verdicts)
	for _, st := range r.Steps {
		switch body := st.Body.(type) {
		case *results.OLTP:
			writeOLTPSummary(&b, st, body)
		case *results.OLTPBuild:
			fmt.Fprintf(&b, "  build      %d warehouses, %.0f MB in %.1f s = %.1f MB/s\n",
				body.Warehouses, float64(body.DBBytes)/1e6, body.TotalS, body.MBPerS)
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
		case *results.DSSBuild:
			writeDSSBuildSummary(&b, body)
		case *results.DSS:
			writeDSSSummary(&b, st, body)
		case *results.Durability:
			writeDurabilitySummary(&b, body)
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

func writeOLTPSummary(b *strings.Builder, st results.Step, o *results.OLTP) {
	keying := "keying/thinking off"
	if o.KeyingThinking != false {
		keying = fmt.Sprintf("keying/thinking x%v", o.KeyingThinking)
	}
	profile := ""
	if o.Profile != "" {
		profile = ", profile " + o.Profile
	}
	fmt.Fprintf(b, "  oltp       %d warehouses, %d users, %s mode%s, %s, %.0f s window (%s)\n",
		o.Warehouses, o.Users, o.Mode, profile, keying, o.DurationS, st.Status)
	metric := func(name string, v *float64, unit, def string) {
		if v == nil {
			fmt.Fprintf(b, "  %-10s n/a        %s\n", name, o.Missing[name])
			return
		}
		fmt.Fprintf(b, "  %-10s %10.0f %-3s %s\n", name, *v, unit, def)
	}
	metric("nopm", o.NOPM, "", "committed New-Orders per minute (Δ sum d_next_o_id)")
	metric("tpm_db", o.TPMDB, "", "commits + rollbacks per minute (pg_stat_database)")
	tc := o.TPMClient
	metric("tpm_client", &tc, "", "transactions completed per minute (client)")
	fmt.Fprintf(b, "  %-10s %10.3f ms  mean %s time of all transactions\n", "art", o.ARTMs, o.LatencyBasis)
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
	opt := func(v *float64, format string) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf(format, *v)
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
