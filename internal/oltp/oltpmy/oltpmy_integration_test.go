//go:build integration

package oltpmy

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startMariaDB starts a throwaway managed instance; it skips where no
// MariaDB is installed, unless CALIBRA_TEST_REQUIRE names mariadb.
func startMariaDB(t *testing.T) *mariadb.Target {
	t.Helper()
	_, missing := mariadb.FindBinaries("")
	testenv.Need(t, "mariadb", missing, "apt-get install mariadb-server")
	e, err := engine.Open(context.Background(), mariadb.Name, engine.Config{Path: testenv.StorageDir(t), DBCache: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, e)
	return e.(*mariadb.Target)
}

// Built with two warehouses, the workload runs in both modes with every
// headline figure, a valid mix, consistent data and NOPM that matches the
// orders the window added; a reset brings back the loaded database, and
// the workload runs on it again.
func TestBuildRunResetBothModes(t *testing.T) {
	t.Parallel()
	target := startMariaDB(t)
	ctx := context.Background()
	prog := progress.New(io.Discard, progress.None, false)
	build, err := oltp.Build(ctx, target, oltp.BuildConfig{Warehouses: 2, Seed: 7, Workers: 2}, prog)
	if err != nil {
		t.Fatal(err)
	}
	if build.Consistency == nil || !build.Consistency.OK || build.Template == "" || build.DBBytes <= 0 {
		t.Fatalf("build: consistency %+v, template %q, %d bytes", build.Consistency, build.Template, build.DBBytes)
	}
	if build.Rows["stock"] != 200000 || build.Rows["orders"] != 60000 || build.Rows["new_order"] != 18000 {
		t.Fatalf("row counts %v do not match two warehouses", build.Rows)
	}
	db := target.DB()
	defer db.Close()
	orders := func() int64 {
		var n int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := orders(); n != 60000 {
		t.Fatalf("%d orders after the build", n)
	}
	checkAudit(t, target)
	// Procedures mode runs on the polling driver, on one thread as on two,
	// users with connections of their own or terminals on pooled ones;
	// the windows that check what was done, not how fast, are paced.
	for _, c := range []struct {
		name string
		cfg  oltp.RunConfig
	}{
		{"client-simple", oltp.RunConfig{Mode: oltp.ModeClientSimple, RatePerUser: oltptest.PacedRate}},
		{"procedures-k1", oltp.RunConfig{Mode: oltp.ModeProcedures, DriverThreads: 1, RatePerUser: oltptest.PacedRate}},
		{"procedures-k2", oltp.RunConfig{Mode: oltp.ModeProcedures, DriverThreads: 2}},
		{"procedures-pooled-k2", oltp.RunConfig{Mode: oltp.ModeProcedures, DriverThreads: 2, Users: 8, Connections: 3, RatePerUser: oltptest.PacedRate}},
	} {
		t.Run(c.name, func(t *testing.T) { runAndCheck(t, target, c.cfg, orders) })
	}
	if err := target.RestoreTemplate(ctx); err != nil {
		t.Fatal(err)
	}
	if n := orders(); n != 60000 {
		t.Fatalf("%d orders after the reset, want the loaded 60000", n)
	}
	t.Run("after reset", func(t *testing.T) {
		runAndCheck(t, target, oltp.RunConfig{Mode: oltp.ModeProcedures, RatePerUser: oltptest.PacedRate}, orders)
	})

}

// A server that refuses local files is loaded by INSERTs (a rebuild: its
// database dropped first, and no template kept); the consistency
// checks see what breaks them; a server gone ends a session's run. On an
// instance of its own, beside TestBuildRunResetBothModes.
func TestBuildByInsertChecksAndFaults(t *testing.T) {
	t.Parallel()
	target := startMariaDB(t)
	ctx := context.Background()
	db := target.DB()
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SET GLOBAL local_infile = OFF"); err != nil {
		t.Fatal(err)
	}
	built, err := oltp.Build(ctx, target, oltp.BuildConfig{Warehouses: 1, Seed: 7, Workers: 2, Rebuild: true, NoTemplate: true}, progress.New(io.Discard, progress.None, false))
	if err != nil {
		t.Fatalf("build by INSERT: %v", err)
	}
	var orders int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM orders").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if !built.Consistency.OK || orders != 30000 {
		t.Fatalf("build by INSERT: consistency %+v, %d orders", built.Consistency, orders)
	}

	// The consistency queries (written once for both dialects) see a
	// broken warehouse total and a lost order line.
	for _, q := range []string{"UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",
		"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = 5 AND ol_number = 1"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := oltp.Check(ctx, target); err != nil || c.OK || c.Checks[0].Violations != 1 || c.Checks[3].Violations != 1 {
		t.Fatalf("after breaking warehouse 1 and district 1/3: %+v (%v)", c, err)
	}

	// A server gone is a fault that ends the run, on a session that says
	// it is closed.
	sess, err := oltp.NewSession(ctx, target, oltp.ModeClientSimple)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	target.Kill()
	err = sess.Payment(ctx, &oltp.PaymentInput{W: 1, D: 1, CW: 1, CD: 1, C: 1, AmountCents: 100})
	if f := sess.Fault(err); err == nil || f == nil || !sess.Closed() {
		t.Errorf("a Payment on a killed server: error %v, fault %v, closed %v", err, f, sess.Closed())
	} else {
		t.Logf("fault: %v (%s)", f, sess.ErrorClass(err))
	}
}

// runAndCheck runs cfg's mode (4 users unless it says), procedures on the
// polling driver's threads (calibra's choice when 0), client-simple on
// goroutines.
func runAndCheck(t *testing.T, target *mariadb.Target, cfg oltp.RunConfig, orders func() int64) {
	ctx := context.Background()
	var edges []int64
	cfg.Users = max(cfg.Users, 4)
	cfg.Rampup, cfg.Duration, cfg.Seed = 500*time.Millisecond, oltptest.Window(string(cfg.Mode)), 3
	cfg.Edge = func() time.Time { edges = append(edges, orders()); return time.Now() }
	o, _, err := oltp.Run(ctx, target, cfg, progress.New(io.Discard, progress.None, false))
	if err != nil {
		t.Fatal(err)
	}
	mode, model := cfg.Mode, oltp.DriverGoroutines
	if mode == oltp.ModeProcedures {
		model = oltp.DriverPolling
	}
	if d := o.Driver; d == nil || d.Model != model || cfg.DriverThreads > 0 && d.Threads != cfg.DriverThreads {
		t.Fatalf("driver %+v, want %s (threads %d)", o.Driver, model, cfg.DriverThreads)
	}
	if cfg.Connections > 0 && (o.Connections != cfg.Connections || o.QueueMs == nil) {
		t.Errorf("connections %d, queue %+v: want %d pooled", o.Connections, o.QueueMs, cfg.Connections)
	}
	if o.NOPM == nil || *o.NOPM <= 0 || o.TPMDB == nil || *o.TPMDB <= 0 || o.TPMClient <= 0 || o.ARTMs <= 0 {
		t.Fatalf("a headline metric is missing or not positive: nopm %v tpm_db %v tpm_client %v art %v (%v)",
			o.NOPM, o.TPMDB, o.TPMClient, o.ARTMs, o.Missing)
	}
	// The server counts the transactions the client completed, give or
	// take the edge reads and the transactions failed on a deadlock.
	if d := math.Abs(*o.TPMDB-o.TPMClient) * o.DurationS / 60; d > 20 {
		t.Errorf("tpm_db %.0f and tpm_client %.0f differ by %.0f transactions", *o.TPMDB, o.TPMClient, d)
	}
	total := oltptest.CheckMix(t, o, false)
	if o.Valid == nil || !*o.Valid {
		t.Errorf("the run is not valid: %q", o.InvalidReasons)
	}
	if o.Transactions["new_order"].Rollbacks == 0 && o.Transactions["new_order"].Count > 1000 {
		t.Errorf("no New-Order rolled back on its unused item in %d", o.Transactions["new_order"].Count)
	}
	if len(o.ErrorClasses) > 0 {
		t.Logf("errors: %v", o.ErrorClasses)
	}
	if o.CheckpointsInWindow == nil {
		t.Errorf("no checkpoint count: %v", o.Missing["checkpoints_in_window"])
	}
	// NOPM is the window's growth of sum(d_next_o_id): the orders table
	// grew by as many rows: the edge hook reads the table while no user
	// runs (give or take the window's duration rounded to the millisecond).
	if len(edges) != 2 {
		t.Fatalf("%d window edges", len(edges))
	}
	gained := float64(edges[1] - edges[0])
	committed := *o.NOPM * o.DurationS / 60
	if gained <= 0 || math.Abs(committed-gained) > 0.5+0.001*gained {
		t.Errorf("NOPM %.1f over %.2f s is %.0f orders; the orders table gained %.0f", *o.NOPM, o.DurationS, committed, gained)
	}
	t.Logf("%s: %d transactions, nopm %.0f, tpm_db %.0f, tpm_client %.0f, art %.2f ms, orders gained %.0f (nopm says %.1f)",
		mode, total, *o.NOPM, *o.TPMDB, o.TPMClient, o.ARTMs, gained, committed)
	c, err := oltp.Check(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if !c.OK {
		t.Errorf("consistency after the run: %+v", c.Checks)
	}
}

// checkAudit runs the durability audit's reads on the loaded database.
func checkAudit(t *testing.T, target *mariadb.Target) {
	ctx := context.Background()
	ctl, err := oltp.Connect(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	if err := ctl.Checkpoint(ctx); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
	next, err := oltp.NextOrderIDs(ctx, ctl)
	if err != nil || len(next) != 20 || next[oltp.District{W: 2, D: 10}] != 3001 {
		t.Errorf("next order ids: %v (%v)", next, err)
	}
	ids, err := oltp.OrderIDs(ctx, ctl, oltp.District{W: 1, D: 1}, 2999)
	if err != nil || len(ids) != 2 {
		t.Errorf("orders from 2999 in district 1 of warehouse 1: %v (%v)", ids, err)
	}
	payments, err := oltp.Payments(ctx, ctl)
	if err != nil || len(payments) != 60000 || payments[oltp.Customer{W: 1, D: 1, C: 1}] != 1 {
		t.Errorf("%d customers with payments (%v)", len(payments), err)
	}
}
