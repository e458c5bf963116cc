//go:build integration

package oltppg

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
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
		rate         float64 // paced (oltptest.PacedRate) or back to back (0)
	}{
		{"procedures-own-k2", oltp.ModeProcedures, 4, 0, 2, 0},
		{"procedures-pooled-k1", oltp.ModeProcedures, 8, 3, 1, oltptest.PacedRate},
		{"procedures-pooled-k2", oltp.ModeProcedures, 8, 3, 2, 0},
		{"client-own-k1", oltp.ModeClient, 4, 0, 1, oltptest.PacedRate},
		{"client-own-k2", oltp.ModeClient, 4, 0, 2, 0},
		{"client-pooled-k2", oltp.ModeClient, 8, 3, 2, oltptest.PacedRate},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := oltp.RunConfig{Users: c.users, Connections: c.conns, Mode: c.mode, Rampup: 500 * time.Millisecond, Duration: 2 * time.Second, Seed: 3,
				DriverThreads: c.threads, RatePerUser: c.rate}
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
	if o.TPMClient <= 0 {
		t.Fatalf("tpm_client %v (%v)", o.TPMClient, o.Missing)
	}
	oltptest.CheckMix(t, o, false)
	if err := oltptest.TPMAgrees(o); err != nil {
		t.Error(err)
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
	cfg := oltp.RunConfig{Users: 4, Mode: oltp.ModeProcedures, Rampup: 500 * time.Millisecond, Duration: 3 * time.Second, Seed: 3, DriverThreads: 2, RatePerUser: 50}
	o, _, err := oltp.Run(context.Background(), target, cfg, progress.New(io.Discard, progress.None, false))
	if err != nil {
		t.Fatal(err)
	}
	if d := o.Driver; d == nil || d.Model != oltp.DriverPolling || d.Threads != 2 || o.LatencyBasis != "response" {
		t.Fatalf("driver %+v, latency basis %s: want polling on 2 threads, response", o.Driver, o.LatencyBasis)
	}
	// The open loop keeps its schedule: 4 users × 50 a second, give or
	// take 10%, and what a starved machine carried across the window's
	// edges, up to the schedule's worst lag (once 231 a second beside the
	// suite, its transactions' p99 571 ms).
	slack := 0.1
	if lag := o.Driver.StartLagMs; lag != nil {
		slack += lag.Max / 1000 / o.DurationS
	}
	if tps := o.TPMClient / 60; math.Abs(tps-200) > 200*slack {
		t.Errorf("%.1f transactions a second, want 4 users × 50 within %.0f%% (start lag %+v)", tps, 100*slack, o.Driver.StartLagMs)
	}
	if o.TPMDB == nil || math.Abs(*o.TPMDB-o.TPMClient)*o.DurationS/60 > 5 {
		t.Errorf("tpm_db %v, tpm_client %.0f", o.TPMDB, o.TPMClient)
	}
	t.Logf("%.0f tpm, art %.3f ms, p99 %.3f ms, start lag %+v, driver %+v", o.TPMClient, o.ARTMs, o.LatMs.P99, o.Driver.StartLagMs, *o.Driver)
}
