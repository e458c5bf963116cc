//go:build integration

package mariadb

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The TPC-C-like layer on MariaDB, from the command line: a build, a timed
// run in each mode judged as on PostgreSQL, the engine recorded, and Ctrl-C
// during a run leaving no mariadbd behind.
func TestOLTPOnManagedMariaDB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	clitest.RequireMariaDB(t)
	path := clitest.StorageDir(t)
	outs := t.TempDir()
	common := []string{"--engine", "mariadb", "--db-cache", "128MB", "--path", path, "--progress", "none"} // [:6] ends at --path

	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", filepath.Join(outs, "build")}, common...)...)
	clitest.NoServerLeft(t, path)
	_, build := clitest.LastStep[*results.OLTPBuild](t, filepath.Join(outs, "build"))
	if build.Rows["stock"] != 100000 || build.Consistency == nil || !build.Consistency.OK || build.Template == "" {
		t.Fatalf("build: rows %v, consistency %+v, template %q", build.Rows, build.Consistency, build.Template)
	}
	// The procedures run back to back (a closed loop, the default); a
	// statement at a time paced (oltptest.Paced), which proves the same
	// with half the CPU.
	for _, mode := range []string{"procedures", "client-simple"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(outs, mode)
			window := []string{"--duration", oltptest.Window(mode).String()}
			if mode == "client-simple" {
				window = oltptest.Paced(mode)
			}
			clitest.MustRun(t, 0, append(append([]string{"oltp", "run", "--reset", "--users", "3", "--rampup", "1s",
				"--mode", mode, "--out", out}, window...), common...)...)
			clitest.NoServerLeft(t, path)
			clitest.CheckRun(t, out, mode)
			r, err := results.Load(out)
			if err != nil || r.Meta.Engine == nil || r.Meta.Engine.Name != "mariadb" || !strings.HasPrefix(r.Meta.Engine.Version, "10.") ||
				r.Meta.Engine.Settings["innodb_flush_method"] != "O_DIRECT" {
				t.Fatalf("meta.engine %+v (%v): want MariaDB 10.x with its settings", r.Meta.Engine, err)
			}
		})
	}

	code, stderr := clitest.InterruptChild(t, "oltp measure", time.Second, append([]string{"oltp", "run", "--users", "2",
		"--rampup", "1s", "--duration", "5m", "--rate-per-user", fmt.Sprint(oltptest.PacedRate), "--progress", "plain",
		"--out", filepath.Join(outs, "cut")}, common[:6]...)...)
	if code != 130 {
		t.Fatalf("interrupted run: exit %d\n%s", code, stderr)
	}
	clitest.NoServerLeft(t, path)
}

// An existing MariaDB server reached by a mysql:// DSN, which names the
// engine by itself: a build and a run in calibra's database there, the
// engine recorded as not managed, and the server left running; then two
// partitions of one run, merged to the database's own count.
func TestOLTPOnMariaDBByDSN(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	clitest.RequireMariaDB(t)
	// 128 MB: the default 1 GB pool would write a 1 GiB redo log first.
	target, err := mariadb.Prepare(context.Background(), mariadb.TargetConfig{Path: clitest.StorageDir(t), DBCache: "128MB"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	cfg := target.Config()
	dsn := fmt.Sprintf("mysql://%s@localhost/%s?socket=%s", cfg.User, cfg.DBName, cfg.Addr)
	out := filepath.Join(t.TempDir(), "run")
	clitest.MustRun(t, 0, "oltp", "build", "--dsn", dsn, "--warehouses", "2", "--progress", "none", "--out", filepath.Join(t.TempDir(), "build"))
	clitest.MustRun(t, 0, "oltp", "run", "--dsn", dsn, "--users", "2", "--rampup", "1s", "--duration", "3s",
		"--rate-per-user", fmt.Sprint(oltptest.PacedRate), "--progress", "none", "--out", out)
	r, err := results.Load(out)
	if err != nil || r.Meta.Engine == nil || r.Meta.Engine.Name != "mariadb" || r.Meta.Engine.Managed {
		t.Fatalf("meta.engine %+v (%v): want MariaDB, not managed", r.Meta.Engine, err)
	}
	if _, o := clitest.LastStep[*results.OLTP](t, out); o.NOPM == nil || *o.NOPM <= 0 || o.Consistency == nil || !o.Consistency.OK {
		t.Fatalf("nopm %v, consistency %+v", o.NOPM, o.Consistency)
	}
	db, err := mariadb.Connect(context.Background(), target.Config())
	if err != nil {
		t.Fatalf("the server calibra does not manage is no longer up: %v", err)
	}
	defer db.Close()

	outs := t.TempDir()
	part := func(i int) string { return filepath.Join(outs, fmt.Sprintf("p%d", i)) }
	before := clitest.NewOrdersSQL(t, db)
	clitest.RunPartitions(t, 2, part, "--dsn", dsn, "--users", "4", "--rampup", "0s", "--duration", "3s",
		"--rate-per-user", fmt.Sprint(oltptest.PacedRate))
	gained := clitest.NewOrdersSQL(t, db) - before
	merged := filepath.Join(outs, "merged")
	clitest.MustRun(t, 0, "merge", part(2), part(1), "--out", merged)
	// tpm_db is not checked here: a MariaDB session's first calls, in the
	// window without a ramp-up, count more transactions than they are
	// (one process alone: 485 against 481 run, exact with a ramp-up).
	clitest.CheckMerge(t, merged, []string{part(1), part(2)}, gained)
}
