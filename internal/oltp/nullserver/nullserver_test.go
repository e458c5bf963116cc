package nullserver_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/nullserver"
	_ "github.com/calibra-bench/calibra/internal/oltp/oltppg"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// nullRun runs cfg against a null server in this process for a short
// window.
func nullRun(t testing.TB, cfg oltp.RunConfig) *results.OLTP {
	t.Helper()
	srv, err := nullserver.Listen(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	// As the command asks: the connections it opens must be free.
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{DSN: srv.DSN(), MaxConnections: cfg.Users + 2})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := oltp.Run(ctx, target, cfg, progress.New(io.Discard, progress.None, false))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A run against the null server goes through the session setup, the
// window's counters and every transaction of each mode, and its counters
// agree with the client's count as a database's do.
func TestRunOnTheNullServer(t *testing.T) {
	for _, c := range []struct {
		mode    oltp.Mode
		threads int
		driver  string
	}{{oltp.ModeProcedures, 1, ""}, {oltp.ModeProcedures, 2, ""}, {oltp.ModeClient, 1, ""}, {oltp.ModeClient, 2, ""}, {oltp.ModeClient, 0, oltp.DriverGoroutines}} {
		mode := c.mode
		t.Run(fmt.Sprint(mode, c.threads, c.driver), func(t *testing.T) {
			out := nullRun(t, oltp.RunConfig{Users: 4, Mode: mode, Rampup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Seed: 1, DriverThreads: c.threads, Driver: c.driver})
			if c.threads > 0 && (out.Driver.Model != oltp.DriverPolling || out.Driver.Threads != c.threads) {
				t.Errorf("driver %+v, want polling on %d threads", out.Driver, c.threads)
			}
			if c.driver != "" && out.Driver.Model != c.driver {
				t.Errorf("driver %+v, want %s as asked", out.Driver, c.driver)
			}
			// The polling threads' own CPU is part of the process's.
			if d := out.Driver; c.threads > 0 && (d.PollingCPUUsPerTxn <= 0 || d.PollingCPUUsPerTxn > d.CPUUsPerTxn) {
				t.Errorf("the polling threads' CPU %.1f µs a transaction, of the process's %.1f", d.PollingCPUUsPerTxn, d.CPUUsPerTxn)
			}
			// Their CPU a transaction is their CPU a wake-up over the
			// transactions a wake-up (each figure rounded); goroutines have
			// no wake-ups to count.
			if d := out.Driver; c.threads > 0 {
				if d.TxnPerWakeup <= 0 || math.Abs(d.PollingCPUUsPerWakeup/d.TxnPerWakeup-d.PollingCPUUsPerTxn) > 0.05*d.PollingCPUUsPerTxn+0.1 {
					t.Errorf("%.2f transactions and %.1f µs a wake-up, %.1f µs a transaction: they do not agree", d.TxnPerWakeup, d.PollingCPUUsPerWakeup, d.PollingCPUUsPerTxn)
				}
			} else if d.TxnPerWakeup != 0 || d.PollingCPUUsPerWakeup != 0 {
				t.Errorf("goroutines reported wake-ups: %+v", d)
			}
			if out.TPMClient == 0 || out.TPMDB == nil || out.NOPM == nil {
				t.Fatalf("no throughput: %+v", out)
			}
			done := out.TPMClient * out.DurationS / 60
			if diff := math.Abs(*out.TPMDB-out.TPMClient) * out.DurationS / 60; diff > 5 {
				t.Errorf("tpm_db %.0f and tpm_client %.0f differ by %.0f transactions (of %.0f)", *out.TPMDB, out.TPMClient, diff, done)
			}
			for name, tx := range out.Transactions {
				if tx.Count == 0 || tx.Errors > 0 {
					t.Errorf("%s: %+v", name, tx)
				}
			}
			t.Logf("%s: %.0f transactions, driver %+v", mode, done, out.Driver)
		})
	}
}
