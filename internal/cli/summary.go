package cli

import (
	"fmt"
	"strings"

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
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s: %s\n", r.Meta.Command, status)
	for _, st := range r.Steps {
		switch body := st.Body.(type) {
		case *results.OLTP:
			writeOLTPSummary(&b, st, body)
		case *results.OLTPBuild:
			fmt.Fprintf(&b, "  build      %d warehouses, %.0f MB in %.1f s = %.1f MB/s\n",
				body.Warehouses, float64(body.DBBytes)/1e6, body.TotalS, body.MBPerS)
		case *results.Device:
			writeDeviceSummary(&b, st, body)
		case *results.OLTPCheck:
			fmt.Fprintf(&b, "  consistency %s\n", verdict(body.Consistency))
		case *results.DSSBuild:
			writeDSSBuildSummary(&b, body)
		case *results.DSS:
			writeDSSSummary(&b, st, body)
		}
	}
	fmt.Fprintf(&b, "results: %s\n", dir.File("results.json"))
	// The summary is the command's answer, shown whatever --progress says.
	prog.Done()
	fmt.Fprint(a.stderr, b.String())
}

func writeOLTPSummary(b *strings.Builder, st results.Step, o *results.OLTP) {
	keying := "keying/thinking off"
	if o.KeyingThinking != false {
		keying = fmt.Sprintf("keying/thinking x%v", o.KeyingThinking)
	}
	fmt.Fprintf(b, "  oltp       %d warehouses, %d users, %s mode, %s, %.0f s window (%s)\n",
		o.Warehouses, o.Users, o.Mode, keying, o.DurationS, st.Status)
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
	for _, name := range []string{"new_order", "payment", "order_status", "delivery", "stock_level"} {
		t := o.Transactions[name]
		fmt.Fprintf(b, "  %-13s %8d %6.2f %9.3f %9.3f %9.3f %9d\n", name, t.Count, o.MixPct[name], t.LatMs.P50, t.LatMs.P90, t.LatMs.P99, t.Errors)
	}
	if o.Consistency != nil {
		fmt.Fprintf(b, "  consistency %s\n", verdict(o.Consistency))
	}
	fmt.Fprintf(b, "  %s\n", o.Workload)
}

func verdict(c *results.Consistency) string {
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
