package clitest

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
)

// CheckRun asserts what a user expects of a timed oltp run of a few
// seconds in dir: complete, judged, every headline figure measured and the
// server's count agreeing with the client's, the mix and bands valid, the
// data consistent, and the window's evidence on disk.
func CheckRun(t *testing.T, dir, mode string) {
	t.Helper()
	st, o := LastStep[*results.OLTP](t, dir)
	basis := "service" // a closed loop's; an open loop's latency runs from the scheduled start
	if o.RatePerUser > 0 {
		basis = "response"
	}
	if st.Status != results.StatusComplete || o.Mode != mode || o.LatencyBasis != basis {
		t.Fatalf("status %s mode %s basis %s", st.Status, o.Mode, o.LatencyBasis)
	}
	if st.LimitedBy == "" || st.LimitedByEvidence == nil || st.LimitedByEvidence.CPUBusyPct == nil || st.LimitedByEvidence.Rule == "" {
		t.Errorf("limited_by %q with evidence %+v: want a class and the figures behind it", st.LimitedBy, st.LimitedByEvidence)
	}
	if o.NOPM == nil || *o.NOPM <= 0 || o.TPMDB == nil || *o.TPMDB <= 0 || o.TPMClient <= 0 || o.ARTMs <= 0 {
		t.Fatalf("a headline metric is missing or not positive: nopm %v tpm_db %v tpm_client %v art %v (%v)",
			o.NOPM, o.TPMDB, o.TPMClient, o.ARTMs, o.Missing)
	}
	if err := oltptest.TPMAgrees(o); err != nil {
		t.Error(err)
	}
	// NOPM is the database's count of New-Orders between the window's
	// edges, where every user holds: the clients' commits in the window
	// are the same ones, each acknowledged as what it was.
	if n := math.Round(*o.NOPM * o.DurationS / 60); n != float64(o.NewOrderCommits) {
		t.Errorf("nopm counts %.0f New-Orders in the window, the users committed %d", n, o.NewOrderCommits)
	}
	oltptest.CheckMix(t, o, true)
	// The delivery figures come with a Delivery in the window (a starved
	// window of 57 transactions beside a busy loop held none).
	delivered := o.Transactions["delivery"].Count > 0
	if o.Profile != "spec" || o.Valid == nil || !*o.Valid || len(o.Checks) != 9 || delivered != (o.Delivery != nil) {
		t.Errorf("profile %q, valid %v %q, %d checks, %d deliveries, delivery %+v: want a valid spec run with its checks", o.Profile, o.Valid != nil && *o.Valid,
			o.InvalidReasons, len(o.Checks), o.Transactions["delivery"].Count, o.Delivery)
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
	// Sessions run back to back always wait on something the sampler
	// sees; paced ones sit idle between transactions, and may show none.
	if st.Observe == nil || st.Observe.CPUBusyPct == nil || o.RatePerUser == 0 && len(st.Observe.Waits) == 0 {
		t.Errorf("the step has no observations of its window (CPU, waits): %+v", st.Observe)
	}
	// A row (and a histogram) for each second of the window, and the header.
	secs := int(o.DurationS)
	csv, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
	if rows := strings.Count(string(csv), "\n"); err != nil || rows < secs+1 || !strings.Contains(string(csv), ",measure,") ||
		!strings.HasPrefix(string(csv), "time,cpu_busy_pct,") {
		t.Errorf("timeseries.csv: %v, %d rows:\n%s", err, rows, csv)
	}
	hlog, err := os.ReadFile(filepath.Join(dir, "raw", "oltp-latency.hlog"))
	if err != nil || strings.Count(string(hlog), "Tag=measure,") < secs {
		t.Errorf("raw/oltp-latency.hlog lacks a histogram per second of the window: %v", err)
	}
}
