package oltppg

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// The polling driver runs procedures and client mode on one thread as on
// two, users with connections of their own as terminals on pooled ones:
// the server counts the transactions the client completed (the window's
// edges hold on every thread and every connection), the mix is the
// deck's, and the data stays consistent.
func TestPollingDriverOnTwoThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	target, _ := builtTarget(t)
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		mode         oltp.Mode
		users, conns int
		threads      int
	}{
		{"procedures-own-k2", oltp.ModeProcedures, 4, 0, 2},
		{"procedures-pooled-k1", oltp.ModeProcedures, 8, 3, 1},
		{"procedures-pooled-k2", oltp.ModeProcedures, 8, 3, 2},
		{"client-own-k1", oltp.ModeClient, 4, 0, 1},
		{"client-own-k2", oltp.ModeClient, 4, 0, 2},
		{"client-pooled-k2", oltp.ModeClient, 8, 3, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := oltp.RunConfig{Users: c.users, Connections: c.conns, Mode: c.mode, Rampup: time.Second, Duration: 5 * time.Second, Seed: 3, DriverThreads: c.threads}
			o, _, err := oltp.Run(ctx, target, cfg, progress.New(io.Discard, progress.None, false))
			if err != nil {
				t.Fatal(err)
			}
			if d := o.Driver; d == nil || d.Model != oltp.DriverPolling || d.Threads != c.threads {
				t.Fatalf("driver %+v, want polling on %d threads", o.Driver, c.threads)
			}
			if c.conns > 0 && (o.Connections != c.conns || o.QueueMs == nil) {
				t.Errorf("connections %d, queue %+v: want %d pooled", o.Connections, o.QueueMs, c.conns)
			}
			checkMixAndCounts(t, o)
			checkConsistent(t, ctx, target)
			t.Logf("%.0f tpm, driver %+v", o.TPMClient, *o.Driver)
		})
	}
}

// checkMixAndCounts checks a run's mix against the spec's and its server
// count against its client count.
func checkMixAndCounts(t *testing.T, o *results.OLTP) {
	t.Helper()
	if o.TPMDB == nil || o.TPMClient <= 0 {
		t.Fatalf("tpm_db %v, tpm_client %v (%v)", o.TPMDB, o.TPMClient, o.Missing)
	}
	var failed int64
	for name, pct := range map[string]float64{"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4} {
		tx := o.Transactions[name]
		failed += tx.Errors
		if tx.Count == 0 || math.Abs(o.MixPct[name]-pct) > 2 {
			t.Errorf("%s: %d completed, %.2f%% of the mix, want %.0f%% ± 2", name, tx.Count, o.MixPct[name], pct)
		}
	}
	// A failed transaction (a deadlock) is the server's and not the
	// client's.
	if d := math.Abs(*o.TPMDB-o.TPMClient) * o.DurationS / 60; d > 5+float64(failed) {
		t.Errorf("tpm_db %.0f and tpm_client %.0f differ by %.0f transactions (%d failed)", *o.TPMDB, o.TPMClient, d, failed)
	}
}

// checkConsistent checks the four consistency conditions.
func checkConsistent(t *testing.T, ctx context.Context, target engine.Engine) {
	t.Helper()
	ctl, err := oltp.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	if c, err := oltp.CheckConsistency(ctx, ctl); err != nil || !c.OK {
		t.Errorf("consistency conditions: %+v (%v)", c, err)
	}
}

// An open loop on the polling driver's timers offers its rate to
// PostgreSQL, and the server counts what the client completed.
func TestPollingDriverOpenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	target, _ := builtTarget(t)
	cfg := oltp.RunConfig{Users: 4, Mode: oltp.ModeProcedures, Rampup: time.Second, Duration: 5 * time.Second, Seed: 3, DriverThreads: 2, RatePerUser: 50}
	o, _, err := oltp.Run(context.Background(), target, cfg, progress.New(io.Discard, progress.None, false))
	if err != nil {
		t.Fatal(err)
	}
	if d := o.Driver; d == nil || d.Model != oltp.DriverPolling || d.Threads != 2 || o.LatencyBasis != "response" {
		t.Fatalf("driver %+v, latency basis %s: want polling on 2 threads, response", o.Driver, o.LatencyBasis)
	}
	if tps := o.TPMClient / 60; math.Abs(tps-200) > 20 {
		t.Errorf("%.1f transactions a second, want 4 users × 50", tps)
	}
	if o.TPMDB == nil || math.Abs(*o.TPMDB-o.TPMClient)*o.DurationS/60 > 5 {
		t.Errorf("tpm_db %v, tpm_client %.0f", o.TPMDB, o.TPMClient)
	}
	t.Logf("%.0f tpm, art %.3f ms, p99 %.3f ms, driver %+v", o.TPMClient, o.ARTMs, o.LatMs.P99, *o.Driver)
}
