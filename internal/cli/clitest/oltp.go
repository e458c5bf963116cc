package clitest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// TPMAgrees checks that the server counted the transactions the client
// completed in the window: the edges are exact and tpm_db leaves out what
// autovacuum committed in the window (PostgreSQL counts its transactions
// with calibra's), so within 5 (a visit of autovacuum's that found nothing
// to do commits 2 unseen), except where a worker was at work at an edge:
// tpm_db then says it could not take out autovacuum's transactions, a few
// for each table it took, never fewer than the client's.
func TPMAgrees(o *results.OLTP) error {
	if o.TPMDB == nil {
		return fmt.Errorf("no tpm_db: %v", o.Missing)
	}
	d := (*o.TPMDB - o.TPMClient) * o.DurationS / 60
	// A few for the counters' edges, and 2 for each autovacuum visit that
	// found nothing to do, which no statistic shows (one a naptime, 1 min:
	// docs/metrics.md); a visit's work is taken out or said to be missing.
	limit := 5.0
	if d > 0 {
		limit += 2 * (1 + math.Floor(o.DurationS/60))
	}
	av := o.AutovacuumInWindow
	if why := o.Missing["autovacuum_xacts"]; av != nil && why != "" && d > 0 {
		limit += 10 * float64(max(*av, 1))
	}
	if math.Abs(d) > limit {
		return fmt.Errorf("tpm_db %.1f and tpm_client %.1f differ by %+.0f transactions over %.1f s, more than %.0f (autovacuum_in_window %s, autovacuum_xacts %s, missing %q)",
			*o.TPMDB, o.TPMClient, d, o.DurationS, limit, Show(av), Show(o.AutovacuumXacts), o.Missing["autovacuum_xacts"])
	}
	return nil
}

// Show prints a figure that may be absent.
func Show(v *int64) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// CheckRun asserts what a user expects of a timed oltp run of a few
// seconds in dir: complete, judged, every headline figure measured and the
// server's count agreeing with the client's, the mix and bands valid, the
// data consistent, and the window's evidence on disk.
func CheckRun(t *testing.T, dir, mode string) {
	t.Helper()
	st, o := LastStep[*results.OLTP](t, dir)
	if st.Status != results.StatusComplete || o.Mode != mode || o.LatencyBasis != "service" {
		t.Fatalf("status %s mode %s basis %s", st.Status, o.Mode, o.LatencyBasis)
	}
	if st.LimitedBy == "" || st.LimitedByEvidence == nil || st.LimitedByEvidence.CPUBusyPct == nil || st.LimitedByEvidence.Rule == "" {
		t.Errorf("limited_by %q with evidence %+v: want a class and the figures behind it", st.LimitedBy, st.LimitedByEvidence)
	}
	if o.NOPM == nil || *o.NOPM <= 0 || o.TPMDB == nil || *o.TPMDB <= 0 || o.TPMClient <= 0 || o.ARTMs <= 0 {
		t.Fatalf("a headline metric is missing or not positive: nopm %v tpm_db %v tpm_client %v art %v (%v)",
			o.NOPM, o.TPMDB, o.TPMClient, o.ARTMs, o.Missing)
	}
	if err := TPMAgrees(o); err != nil {
		t.Error(err)
	}
	want := map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}
	var total int64
	for name := range want {
		tx := o.Transactions[name]
		if tx.Count == 0 || tx.Errors != 0 {
			t.Errorf("%s: count %d errors %d", name, tx.Count, tx.Errors)
		}
		total += tx.Count
	}
	// Whole decks deal the mix exactly; each user's last, partial deck
	// shifts a type by a few cards, a share that falls as 1/n: 2 points at
	// 1,000 transactions, as much wider below as there are fewer (a busy
	// host may run a slow mode's window short of 1,000).
	if total < 250 {
		t.Fatalf("only %d transactions: too few to judge the mix", total)
	}
	tolerance := 2 * max(1, 1000/float64(total))
	for name, pct := range want {
		if math.Abs(o.MixPct[name]-pct) > tolerance {
			t.Errorf("%s is %.2f%% of the mix, want %.0f%% ± %.1f (%d transactions)", name, o.MixPct[name], pct, tolerance, total)
		}
	}
	if o.Profile != "spec" || o.Valid == nil || !*o.Valid || len(o.Checks) != 9 || o.Delivery == nil {
		t.Errorf("profile %q, valid %v %q, %d checks, delivery %+v: want a valid spec run with its checks", o.Profile, o.Valid,
			o.InvalidReasons, len(o.Checks), o.Delivery)
	}
	// A few seconds after a fresh start hold no checkpoint, and say so.
	if o.CheckpointsInWindow == nil || *o.CheckpointsInWindow == 0 && len(o.Warnings) == 0 {
		t.Errorf("checkpoints_in_window %v, warnings %q", o.CheckpointsInWindow, o.Warnings)
	}
	if o.Consistency == nil || !o.Consistency.OK {
		t.Errorf("consistency after the run: %+v", o.Consistency)
	}
	if o.Driver == nil || o.Driver.CPUUsPerTxn <= 0 {
		t.Errorf("no driver CPU figure: %+v", o.Driver)
	}
	if st.Observe == nil || st.Observe.CPUBusyPct == nil || len(st.Observe.Waits) == 0 {
		t.Errorf("the step has no observations of its window (CPU, waits): %+v", st.Observe)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
	if rows := strings.Count(string(csv), "\n"); err != nil || rows < 9 || !strings.Contains(string(csv), ",measure,") ||
		!strings.HasPrefix(string(csv), "time,cpu_busy_pct,") {
		t.Errorf("timeseries.csv: %v, %d rows:\n%s", err, rows, csv)
	}
	hlog, err := os.ReadFile(filepath.Join(dir, "raw", "oltp-latency.hlog"))
	if err != nil || strings.Count(string(hlog), "Tag=measure,") < 8 {
		t.Errorf("raw/oltp-latency.hlog lacks a histogram per second of the window: %v", err)
	}
}
