//go:build integration

package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestPartitionsMergeToTheDatabasesCount runs three calibra processes as
// the partitions of one run against one existing server, from a shared
// start, and merges them: the merged NOPM is the database's own count, and
// the merged percentiles are those of the union of the partitions' logs.
func TestPartitionsMergeToTheDatabasesCount(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("three real calibra processes on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	ctx := context.Background()
	path := clitest.StorageDir(t)
	server := clitest.ExistingServer(t, path)
	admin, err := pgx.Connect(ctx, server("calibra", "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE bench"); err != nil {
		t.Fatal(err)
	}
	dsnFile := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(dsnFile, []byte(server("calibra", "bench")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outs := t.TempDir()
	out := func(name string) string { return filepath.Join(outs, name) }
	clitest.MustRun(t, 0, "oltp", "build", "--dsn-file", dsnFile, "--warehouses", "3", "--load-workers", "2", "--progress", "none", "--out", out("build"))

	db, err := pgx.Connect(ctx, server("calibra", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	before := clitest.NewOrders(t, db)

	const n = 3
	clitest.RunPartitions(t, n, func(i int) string { return out(fmt.Sprintf("p%d", i)) }, "--dsn-file", dsnFile,
		"--users", "6", "--rampup", "0s", "--duration", "3s", oltptest.PacedFlag)
	gained := clitest.NewOrders(t, db) - before

	clitest.MustRun(t, 0, "merge", out("p3"), out("p1"), out("p2"), "--out", out("merged"))
	st, o := clitest.LastStep[*results.OLTP](t, out("merged"))
	if st.Status != results.StatusComplete || o.Users != 6 || len(o.Partitions) != n || o.NOPM == nil || o.TPMDB == nil {
		t.Fatalf("merged: status %s, %d users, %d partitions, nopm %v, tpm_db %v (%v)", st.Status, o.Users, len(o.Partitions), o.NOPM, o.TPMDB, o.Missing)
	}
	clitest.CheckMerge(t, out("merged"), []string{out("p1"), out("p2"), out("p3")}, gained)
	clitest.CheckMergedTPMDB(t, out("merged"))
	for _, f := range []string{"report.html", "report.md", "timeseries.csv", "raw/oltp-latency.hlog", "raw/oltp-window.hlog"} {
		if _, err := os.Stat(filepath.Join(out("merged"), f)); err != nil {
			t.Errorf("the merged run lacks %s", f)
		}
	}
	// The shell example: two local processes, then the merge.
	sh := exec.Command("sh", filepath.Join("..", "..", "..", "..", "examples", "partitions.sh"), dsnFile, "2", "4", "2s")
	sh.Env = append(os.Environ(), "CALIBRA_TEST_AS_CALIBRA=1", "CALIBRA="+os.Args[0], "RAMPUP=0s", "OUT="+out("sh"))
	if b, err := sh.CombinedOutput(); err != nil {
		t.Errorf("examples/partitions.sh: %v\n%s", err, b)
	} else if _, o := clitest.LastStep[*results.OLTP](t, out("sh/merged")); o.Users != 4 || len(o.Partitions) != 2 || o.NOPM == nil {
		t.Errorf("examples/partitions.sh merged %d users of %d partitions, nopm %v", o.Users, len(o.Partitions), o.NOPM)
	}

	// Partitions of another run do not mix in: nothing is written.
	code, _, stderr := clitest.Run(t, "merge", out("p1"), out("p2"), "--out", out("half"))
	if code != 2 || !strings.Contains(stderr, "partition 3/3 is missing") {
		t.Errorf("merging two of three partitions: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out("half")); err == nil {
		t.Error("a refused merge left its --out behind")
	}
}
