//go:build integration

package scale

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
)

// A build and a short run with a synchronous standby: the standby streams
// and is synchronous through the window, its lag and I/O are figures of
// the step, it holds the primary's rows after the run, and no server is
// left after the command, after a Ctrl-C mid-run, or after clean.
func TestOLTPWithASynchronousStandby(t *testing.T) {
	t.Parallel() // real servers: they overlap their waits
	if testing.Short() {
		t.Skip("builds and runs on a real PostgreSQL with a standby; run without -short")
	}
	clitest.RequirePostgres(t)
	path, out := clitest.Dirs(t)
	common := []string{"--replicas", "1", "--sync", "remote_apply", "--db-cache", "64MB", "--path", path, "--progress", "none"}

	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", out("build")}, common...)...)
	if log, err := os.ReadFile(filepath.Join(out("build"), "logs", "calibra.log")); err != nil || !strings.Contains(string(log), "made the standby calibra_replica_1") {
		t.Errorf("the build did not say it made the standby (%v):\n%s", err, log)
	}
	clitest.NoServerLeft(t, path)
	// A closed loop, not paced: paced, a busy run's standby was caught up
	// and idle at every sample, and reported no lag time to check.
	clitest.MustRun(t, 0, append([]string{"oltp", "run", "--users", "2", "--rampup", "1s", "--duration", "4s", "--out", out("run")}, common...)...)
	clitest.NoServerLeft(t, path)

	r, err := results.Load(out("run"))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Meta.Engine
	if e.Replicas == nil || e.Replicas.Count != 1 || e.Replicas.Sync != "remote_apply" || len(e.Replicas.Standbys) != 1 ||
		e.Settings["synchronous_standby_names"] != "FIRST 1 (calibra_replica_1)" || e.Settings["synchronous_commit"] != "remote_apply" {
		t.Fatalf("meta.engine records replicas %+v and settings %v", e.Replicas, e.Settings)
	}
	if r.Meta.Storage.Replicas == nil || r.Meta.Storage.Replicas.Device == "" {
		t.Errorf("meta.storage.replicas %+v names no device", r.Meta.Storage.Replicas)
	}
	st, o := clitest.LastStep[*results.OLTP](t, out("run"))
	if st.Status != results.StatusComplete || o.NOPM == nil || *o.NOPM <= 0 {
		t.Fatalf("the run: %s, nopm %v", st.Status, o.NOPM)
	}
	if st.Observe == nil || len(st.Observe.Replicas) != 1 {
		t.Fatalf("observe.replicas: %+v", st.Observe)
	}
	rep := st.Observe.Replicas[0]
	if rep.Samples < 4 || rep.States["streaming/sync"] != rep.Samples {
		t.Errorf("the standby was not streaming and synchronous at every sample of the window: %v of %d", rep.States, rep.Samples)
	}
	if rep.ReplayLagMs == nil || rep.FlushLagMs == nil || rep.ReplayLagBytes == nil || rep.ReplayLagMs.Max < rep.ReplayLagMs.Mean {
		t.Errorf("lag figures missing or inconsistent: %+v (missing %v)", rep, st.Observe.Missing)
	}
	if rep.WriteCallBytes == nil || *rep.WriteCallBytes <= 0 || rep.WriteMBps == nil {
		t.Errorf("the standby's writes are not measured: %+v (missing %v)", rep, st.Observe.Missing)
	}

	if md, err := os.ReadFile(filepath.Join(out("run"), "report.md")); err != nil || !strings.Contains(string(md), "Standbys over the window") {
		t.Errorf("report.md shows no standby's lag: %v", err)
	}

	// The standby holds what the primary committed: start both again
	// (the standby is reused, not made anew) and compare.
	checkStandbyRows(t, path)
	clitest.NoServerLeft(t, path)

	// Ctrl-C mid-run stops the standby too; paced, as what stops does not
	// depend on how fast the users ran.
	code, stderr := clitest.InterruptChild(t, "oltp run: 2 users", 2*time.Second, append([]string{"oltp", "run", "--users", "2",
		"--rampup", "1s", "--duration", "5m", oltptest.PacedFlag, "--out", out("interrupted")}, common[:len(common)-2]...)...)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	clitest.NoServerLeft(t, path)

	clitest.MustRun(t, 0, "clean", "--path", path)
	if left, _ := filepath.Glob(filepath.Join(path, postgres.ReplicaDirPrefix+"*")); len(left) > 0 {
		t.Errorf("clean left %v", left)
	}
}

// checkStandbyRows starts the managed instance under path with its
// standby and checks that the standby's sum(d_next_o_id) is the primary's.
func checkStandbyRows(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	group := proc.NewGroup()
	defer func() { _ = group.StopAll(time.Minute) }()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: path, DBCache: "64MB", Replicas: postgres.ReplicaConfig{N: 1, Sync: postgres.SyncRemoteApply}})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Stop()
	if _, err := target.Start(ctx, group); err != nil {
		t.Fatal(err)
	}
	if len(target.Repairs) > 0 {
		t.Errorf("the standby was not reused as it was: %v", target.Repairs)
	}
	primary, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close(ctx)
	sum := func(conn *pgx.Conn) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT sum(d_next_o_id) FROM calibra_tpcc.district").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := sum(primary)
	// The standby's socket and port are in its postmaster.pid (lines 4, 5).
	data, err := os.ReadFile(filepath.Join(path, postgres.ReplicaDirPrefix+"1", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	port, _ := strconv.Atoi(strings.TrimSpace(lines[3]))
	standby, err := pgx.Connect(ctx, "host="+strings.TrimSpace(lines[4])+" port="+strconv.Itoa(port)+" user="+postgres.Superuser+" dbname="+postgres.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close(ctx)
	if got := sum(standby); got != want || want <= 0 {
		t.Errorf("the standby's sum(d_next_o_id) is %d, the primary's %d", got, want)
	}
}
