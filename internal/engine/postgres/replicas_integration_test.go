//go:build integration

package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// startWithReplicas starts a managed instance with n synchronous standbys
// on a small cache, stopped at the end of the test.
func startWithReplicas(t *testing.T, n int) *Target {
	t.Helper()
	_, missing := FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	target, err := Prepare(context.Background(), TargetConfig{Path: testenv.StorageDir(t), DBCache: "64MB",
		Replicas: ReplicaConfig{N: n, Sync: SyncRemoteApply}})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	return target
}

// A standby is locked as its primary is: no TCP listener, and on its
// socket (even opened to everyone) peer authentication refuses another
// local account; the primary refuses that account a replication
// connection too.
func TestAnotherAccountCannotLogInToAStandby(t *testing.T) {
	t.Parallel()
	uid, gid := testenv.Stranger(t)
	target := startWithReplicas(t, 1)
	sb := target.replicas.standbys[0]
	bin := sb.cfg.Bin
	if out, err := loginAs(uid, gid, bin, sb.SocketDir, sb.Port, "dbname=postgres"); err == nil {
		t.Errorf("the account nobody logged in to the standby: %s", out)
	}
	for _, in := range []*Instance{sb, target.Managed} {
		if err := os.Chmod(in.SocketDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for what, try := range map[string]func() (string, error){
		"the standby": func() (string, error) { return loginAs(uid, gid, bin, sb.SocketDir, sb.Port, "dbname=postgres") },
		"the primary, for replication": func() (string, error) {
			return loginAs(uid, gid, bin, target.Managed.SocketDir, target.Managed.Port, "replication=true")
		},
	} {
		out, err := try()
		if err == nil {
			t.Errorf("the account nobody logged in to %s through an open socket directory: %s", what, out)
		} else if !strings.Contains(out, "authentication failed") {
			t.Errorf("the account nobody was refused by %s for another reason than authentication: %s", what, out)
		}
	}
}

// A reset from the template on the primary reaches the standby: physical
// replication carries CREATE DATABASE ... TEMPLATE and the swap's renames,
// so the standbys need not be made again.
func TestAResetReachesTheStandby(t *testing.T) {
	t.Parallel()
	target := startWithReplicas(t, 1)
	ctx := context.Background()
	primary, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE TABLE t (v int)", "INSERT INTO t SELECT generate_series(1, 1000)"} {
		if _, err := primary.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	primary.Close(ctx)
	if _, err := target.SaveTemplate(ctx, "1000 rows"); err != nil {
		t.Fatal(err)
	}
	if primary, err = pgx.ConnectConfig(ctx, target.ConnConfig()); err != nil {
		t.Fatal(err)
	}
	if _, err := primary.Exec(ctx, "DELETE FROM t WHERE v > 10"); err != nil {
		t.Fatal(err)
	}
	primary.Close(ctx)
	sb := target.replicas.standbys[0]
	standbySum := func() int64 {
		t.Helper()
		// remote_apply: what the primary committed is replayed already.
		conn, err := pgx.Connect(ctx, sb.ConnString(Database))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var sum int64
		if err := conn.QueryRow(ctx, "SELECT sum(v) FROM t").Scan(&sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if got := standbySum(); got != 55 {
		t.Fatalf("the standby sums %d before the reset, want 55", got)
	}
	if err := target.RestoreTemplate(ctx); err != nil {
		t.Fatal(err)
	}
	// The standby replays the drop and rename of the database after the
	// commit is acknowledged; give it a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, sb.ConnString(Database))
		if err == nil {
			var sum int64
			err = conn.QueryRow(ctx, "SELECT sum(v) FROM t").Scan(&sum)
			conn.Close(ctx)
			if err == nil && sum == 500500 {
				t.Logf("the standby held the template's rows %v after the reset", time.Until(deadline.Add(-10*time.Second)).Abs())
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby does not hold the template's rows 10 s after the reset: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
