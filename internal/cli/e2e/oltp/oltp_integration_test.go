//go:build integration

package oltp

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
)

// TestOLTPOnAManagedInstance builds one warehouse on a real managed
// PostgreSQL, runs it in both modes and with keying and thinking, checks
// consistency, and leaves no server behind.
func TestOLTPOnAManagedInstance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a minute of real PostgreSQL work; run without -short")
	}
	clitest.RequirePostgres(t)
	path, out := clitest.Dirs(t)
	common := []string{"--path", path, "--progress", "none"}

	// A run on an empty instance builds first, says so, and then runs; a
	// relative --path works as well as an absolute one.
	code, stderr := clitest.RunIn(t, filepath.Dir(path), "oltp", "run", "--warehouses", "1", "--users", "1", "--rampup", "0s",
		"--duration", "1s", oltptest.PacedFlag, "--out", out("first"), "--path", filepath.Base(path), "--progress", "none")
	if code != 0 {
		t.Fatalf("the first run: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "build") {
		t.Errorf("the first run did not say it built the schema:\n%s", stderr)
	}
	first, err := results.Load(out("first"))
	if err != nil || first.Status != results.StatusComplete || len(first.Steps) != 2 ||
		first.Steps[0].Kind != results.KindOLTPBuild || first.Steps[1].Kind != results.KindOLTP {
		t.Fatalf("the first run: %v %+v", err, first)
	}

	// The build the run made is a build as 'oltp build' makes it: checked,
	// counted, timed, and kept as the template resets restore.
	build, ok := first.Steps[0].Body.(*results.OLTPBuild)
	if !ok {
		t.Fatalf("the first run's build step: %+v", first.Steps[0].Body)
	}
	if build.Consistency == nil || !build.Consistency.OK {
		t.Fatalf("the fresh build fails its consistency checks: %+v", build.Consistency)
	}
	if build.Rows["stock"] != 100000 || build.Rows["customer"] != 30000 || build.Rows["new_order"] != 9000 {
		t.Fatalf("row counts %v do not match one warehouse", build.Rows)
	}
	if build.Template == "" || build.MBPerS <= 0 {
		t.Fatalf("build kept no template or measured no rate: %+v", build)
	}

	// Procedures and client mode on PostgreSQL run on the polling driver
	// (client mode on goroutines when asked); client-simple on a goroutine
	// a user. The default, procedures on the polling driver, runs a closed
	// loop; the other windows are paced (oltptest.Paced), as cheap and as
	// strict on what they check (MariaDB's procedures keep the goroutine
	// driver's closed loop, in e2e/mariadb).
	// The closed loop starts its window at once (no ramp-up: every
	// connection holds before its first transaction), the others after one.
	for _, c := range []struct {
		mode, driver, want, rampup string
		paced                      bool
	}{
		{"procedures", runner.DriverAuto, oltp.DriverPolling, "0s", false},
		{"client", runner.DriverAuto, oltp.DriverPolling, "1s", true},
		{"client", oltp.DriverGoroutines, oltp.DriverGoroutines, "1s", true},
		{"client-simple", runner.DriverAuto, oltp.DriverGoroutines, "1s", true},
	} {
		name := c.mode + "-" + c.driver
		t.Run(name, func(t *testing.T) {
			window := []string{"--duration", oltptest.Window(c.mode).String()}
			if c.paced {
				window = oltptest.Paced(c.mode)
			}
			clitest.MustRun(t, 0, append(append([]string{"oltp", "run", "--warehouses", "1", "--users", "3", "--rampup", c.rampup,
				"--mode", c.mode, "--driver", c.driver, "--out", out(name)}, window...), common...)...)
			clitest.NoServerLeft(t, path)
			clitest.CheckRun(t, out(name), c.mode)
			if _, o := clitest.LastStep[*results.OLTP](t, out(name)); o.Driver.Model != c.want {
				t.Errorf("driver model %q, want %q", o.Driver.Model, c.want)
			}
		})
	}

	t.Run("another warehouse count is refused", func(t *testing.T) {
		stderr := clitest.MustRun(t, 2, append([]string{"oltp", "run", "--warehouses", "2", "--out", out("wrongw")}, common...)...)
		if !strings.Contains(stderr, "the schema holds 1 warehouses but the run asks for 2") {
			t.Fatalf("stderr: %s", stderr)
		}
		clitest.NoServerLeft(t, path)
	})

	t.Run("check", func(t *testing.T) {
		clitest.MustRun(t, 0, append([]string{"oltp", "check", "--out", out("check")}, common...)...)
		_, c := clitest.LastStep[*results.OLTPCheck](t, out("check"))
		if !c.Consistency.OK || len(c.Consistency.Checks) != 4 {
			t.Fatalf("check: %+v", c.Consistency)
		}
	})

	t.Run("reset from the template", func(t *testing.T) {
		clitest.MustRun(t, 0, append([]string{"oltp", "run", "--reset", "--users", "1", "--rampup", "0s", "--duration", "1s",
			oltptest.PacedFlag, "--out", out("reset")}, common...)...)
	})

	t.Run("clean removes the instance and device leftovers", func(t *testing.T) {
		leftover := filepath.Join(path, "calibra-device", "w0")
		if err := os.MkdirAll(filepath.Dir(leftover), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(leftover, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		clitest.MustRun(t, 0, "clean", "--path", path)
		if _, err := os.Stat(leftover); !os.IsNotExist(err) {
			t.Fatalf("the device test file %s is still there", leftover)
		}
		if _, err := os.Stat(filepath.Join(path, postgres.DataDirName)); !os.IsNotExist(err) {
			t.Fatalf("%s/%s still exists", path, postgres.DataDirName)
		}
	})
}

// builtInstance builds one warehouse on a managed PostgreSQL of the test's
// own, for the tests that share nothing with another's instance; it
// returns the path and a maker of run directories.
func builtInstance(t *testing.T) (string, func(string) string) {
	t.Helper()
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	clitest.RequirePostgres(t)
	path, out := clitest.Dirs(t)
	clitest.MustRun(t, 0, "oltp", "build", "--warehouses", "1", "--path", path, "--progress", "none", "--out", out("build"))
	return path, out
}

// TestOLTPTerminalsAndProfiles runs spec timing, terminals sharing
// connections and HammerDB's profile on one warehouse.
func TestOLTPTerminalsAndProfiles(t *testing.T) {
	t.Parallel()
	path, out := builtInstance(t)
	common := []string{"--path", path, "--progress", "none"}

	t.Run("keying and thinking scaled", func(t *testing.T) {
		clitest.MustRun(t, 0, append([]string{"oltp", "run", "--users", "10", "--rampup", "1s", "--duration", "3s",
			"--keying-thinking", "0.01", "--out", out("keying")}, common...)...)
		_, o := clitest.LastStep[*results.OLTP](t, out("keying"))
		if o.LatencyBasis != "response" || o.KeyingThinking != 0.01 {
			t.Fatalf("basis %s keying %v, want response and 0.01", o.LatencyBasis, o.KeyingThinking)
		}
		if o.NOPM == nil || *o.NOPM <= 0 || o.ARTMs <= 0 || o.Consistency == nil || !o.Consistency.OK {
			t.Fatalf("nopm %v art %v consistency %+v", o.NOPM, o.ARTMs, o.Consistency)
		}
		// Ten terminals thinking ~0.1 s between transactions cannot run flat out.
		if o.TPMClient > 10*60/0.05 {
			t.Errorf("tpm_client %.0f is too high for ten thinking terminals", o.TPMClient)
		}
	})

	t.Run("terminals on few connections", func(t *testing.T) {
		// Paced: twelve terminals' transactions still queue for three
		// connections, and the closed loop is the next subtest's.
		clitest.MustRun(t, 0, append([]string{"oltp", "run", "--users", "12", "--connections", "3", "--rampup", "1s",
			"--duration", "3s", oltptest.PacedFlag, "--out", out("pooled")}, common...)...)
		clitest.CheckRun(t, out("pooled"), "procedures")
		_, o := clitest.LastStep[*results.OLTP](t, out("pooled"))
		if o.Users != 12 || o.Connections != 3 || o.QueueMs == nil || o.QueueMs.Mean <= 0 || o.QueueMs.Mean > o.ARTMs {
			t.Errorf("users %d on %d connections, queue %+v, art %.3f ms: want 12 on 3, a wait inside the latency", o.Users, o.Connections, o.QueueMs, o.ARTMs)
		}
		// The heap is the whole test process's: a parallel test freeing
		// more than the terminals took leaves the figure absent with its
		// reason, never 0.
		if o.Driver == nil || o.Driver.Model != oltp.DriverPolling {
			t.Errorf("driver %+v: want the terminals on the polling driver", o.Driver)
		} else if why := o.Missing["driver.mem_per_user_kb"]; (o.Driver.MemPerUserKB > 0) == (why != "") {
			t.Errorf("driver's memory per user %v KB, missing %q: want one of a positive figure and a reason", o.Driver.MemPerUserKB, why)
		}
	})

	// Paced, but fast: 1,600 transactions deal the 23-card deck within the
	// 2 points asked (the cut decks at the window's edges move a type by a
	// few cards), where a closed loop ran some 12,000 for 6 s of CPU.
	t.Run("hammerdb profile", func(t *testing.T) {
		stderr := clitest.MustRun(t, 0, append([]string{"oltp", "run", "--profile", "hammerdb", "--users", "2", "--rampup", "0s",
			"--duration", "4s", "--rate-per-user", "200", "--out", out("hammerdb")}, common...)...)
		_, o := clitest.LastStep[*results.OLTP](t, out("hammerdb"))
		if o.Profile != "hammerdb" || !strings.Contains(stderr, "profile hammerdb") || math.Abs(o.MixPct["new_order"]-43.48) > 2 {
			t.Errorf("profile %q, New-Order %.2f%% of the mix; want hammerdb, 43.48%%, and the summary to say so", o.Profile, o.MixPct["new_order"])
		}
	})

}

// TestOLTPOnAnExistingServer drives a server calibra did not start, reached
// through --dsn alone.
func TestOLTPOnAnExistingServer(t *testing.T) {
	t.Parallel()
	path, out := builtInstance(t)
	t.Run("existing server through --dsn", func(t *testing.T) {
		server := clitest.ExistingServer(t, path)
		const password = "pw-8c1d-s3cret"
		dsn := server("calibra:"+password, "calibra")
		dsnFile := filepath.Join(t.TempDir(), "dsn")
		if err := os.WriteFile(dsnFile, []byte(dsn+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		clitest.MustRun(t, 0, "oltp", "run", "--dsn-file", dsnFile, "--users", "2", "--rampup", "0s", "--duration", "2s", oltptest.PacedFlag,
			"--progress", "none", "--out", out("dsn"))
		r, err := results.Load(out("dsn"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Meta.Engine == nil || r.Meta.Engine.Managed {
			t.Fatalf("engine %+v: want unmanaged", r.Meta.Engine)
		}
		if r.Meta.Study["command"] != "oltp run" {
			t.Fatalf("study %+v: want the command and its flags", r.Meta.Study)
		}
		// No file of the run directory, and no plan, holds the password.
		err = filepath.WalkDir(out("dsn"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(data), password) {
				t.Errorf("%s holds the DSN's password", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := clitest.Run(t, "plan", "--preset", "tprocc", "--dsn", dsn); code != 0 || strings.Contains(stdout+stderr, password) || !strings.Contains(stdout, "xxxxx") {
			t.Errorf("plan --dsn: exit %d, want the password redacted:\n%s%s", code, stdout, stderr)
		}
		admin, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close(context.Background())
		// At a low rate the observers' own polls (10 a second) would dwarf
		// the load if they ran in the benchmarked database: they run in
		// postgres, and the server counts what the driver completed. The
		// database is kept quiet (no autovacuum, whose transactions the server
		// counts too, after the runs above churned the tables).
		autovacuum := func(on string) {
			if _, err := admin.Exec(context.Background(), `DO $$ DECLARE r record; BEGIN
				FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'calibra_tpcc' LOOP
					EXECUTE format('ALTER TABLE calibra_tpcc.%I SET (autovacuum_enabled = `+on+`)', r.tablename);
				END LOOP; END $$`); err != nil {
				t.Fatal(err)
			}
		}
		autovacuum("off")
		clitest.MustRun(t, 0, "oltp", "run", "--dsn", dsn, "--users", "10", "--keying-thinking", "0.01", "--rampup", "1s",
			"--duration", "3s", "--progress", "none", "--out", out("dsn-slow"))
		autovacuum("on")
		st, o := clitest.LastStep[*results.OLTP](t, out("dsn-slow"))
		if o.TPMDB == nil || o.TPMClient*o.DurationS/60 < 100 {
			t.Fatalf("tpm_db %v, tpm_client %.0f over %.0f s: too little to judge (%v)", o.TPMDB, o.TPMClient, o.DurationS, o.Missing)
		}
		if err := oltptest.TPMAgrees(o); err != nil {
			t.Error(err)
		}
		if st.Observe == nil || st.Observe.DB == nil || st.Observe.DB.Database != "calibra" || st.Observe.Missing["db.observers_inside"] != "" {
			t.Errorf("the observers did not watch calibra from outside it: %+v", st.Observe)
		}

		// A transaction type that always fails leaves the measured mix short
		// of clause 5.2.3's minimum: the step says it is not valid, and why.
		sabotage := []string{
			"ALTER FUNCTION calibra_tpcc.tpcc_order_status(int, int, int, text) RENAME TO tpcc_order_status_real",
			`CREATE FUNCTION calibra_tpcc.tpcc_order_status(int, int, int, text) RETURNS int LANGUAGE plpgsql AS
				$$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$`,
		}
		for _, q := range sabotage {
			if _, err := admin.Exec(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		// Enough transactions for the minimum to be judged: at 2 users the
		// sampling slack reaches 4% below some 180 of them, and a loaded CI
		// machine completed 148 of the 240 a paced 3 s asks.
		code, _, stderr := clitest.Run(t, "oltp", "run", "--dsn", dsn, "--users", "2", "--rampup", "0s", "--duration", "4s",
			"--rate-per-user", "100", "--progress", "none", "--out", out("dsn-invalid"))
		for _, q := range []string{"DROP FUNCTION calibra_tpcc.tpcc_order_status(int, int, int, text)",
			"ALTER FUNCTION calibra_tpcc.tpcc_order_status_real(int, int, int, text) RENAME TO tpcc_order_status"} {
			if _, err := admin.Exec(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		if code != 0 && code != 1 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		_, inv := clitest.LastStep[*results.OLTP](t, out("dsn-invalid"))
		if inv.Valid == nil || *inv.Valid || len(inv.InvalidReasons) == 0 ||
			!strings.Contains(inv.InvalidReasons[0], "order_status is 0.00% of the mix, below clause 5.2.3's minimum of 4%") {
			t.Errorf("every Order-Status failed: valid %v, reasons %q, checks %+v; want invalid for the mix", inv.Valid, inv.InvalidReasons, inv.Checks)
		}
		if !strings.Contains(stderr, "valid      NO: order_status is 0.00% of the mix") {
			t.Errorf("the summary does not say the run is invalid:\n%s", stderr)
		}

		bad := server("nosuchuser:hunter2", "calibra")
		code, _, stderr = clitest.Run(t, "oltp", "run", "--dsn", bad, "--progress", "none", "--out", out("badlogin"))
		if code != 2 || !strings.Contains(stderr, "refused the login of nosuchuser@") || strings.Contains(stderr, "hunter2") {
			t.Fatalf("a refused login: exit %d, stderr %s", code, stderr)
		}
	})

}
