//go:build integration

package dssmy_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/dss"
	_ "github.com/calibra-bench/calibra/internal/dss/dssmy"
	"github.com/calibra-bench/calibra/internal/dss/dsstest"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startTarget starts a managed MariaDB on storage its account can reach,
// stopped when the test ends.
func startTarget(t *testing.T) (engine.Engine, *proc.Group) {
	t.Helper()
	_, missing := mariadb.FindBinaries("")
	testenv.Need(t, "mariadb", missing, "apt-get install mariadb-server")
	target, err := mariadb.Prepare(context.Background(), mariadb.TargetConfig{Path: testenv.StorageDir(t), DBCache: "256MB", MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

// TestQueriesAgainstDuckDB is dsstest's check on a real MariaDB.
func TestQueriesAgainstDuckDB(t *testing.T) {
	t.Parallel()
	dsstest.Run(t, dsstest.Suite{
		Start:  startTarget,
		Serial: func(p map[string]string) bool { return strings.HasPrefix(p["query_parallelism"], "none") },
	})
}

// A server that refuses LOAD DATA LOCAL (a --dsn server's local_infile
// OFF) fails the build with one sentence saying how to allow it.
func TestLocalInfileOffIsBadInput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a real MariaDB server; run without -short")
	}
	gen, err := dss.FindGenerator(context.Background(), "")
	testenv.Need(t, "tpchgen", err, "no TPC-H generator: "+dss.InstallHint)
	target, group := startTarget(t)
	db := target.(*mariadb.Target).DB()
	defer db.Close()
	if _, err := db.Exec("SET GLOBAL local_infile = OFF"); err != nil {
		t.Fatal(err)
	}
	prog := progress.New(io.Discard, progress.None, false)
	_, err = dss.Build(context.Background(), target, dss.BuildConfig{ScaleFactor: 0.01, Workers: 1, Group: group, Tpchgen: gen.Path}, prog)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "local_infile") {
		t.Errorf("a build with local_infile OFF: %v", err)
	}
}

// A statement whose context ends stops on the server too, not only in
// the client. BENCHMARK never looks at its socket, as a long query's scan
// does not.
func TestACanceledStatementStopsOnTheServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a real MariaDB server; run without -short")
	}
	target, _ := startTarget(t)
	d, err := dss.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.Connect(context.Background(), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := conn.Rows(ctx, "SELECT BENCHMARK(2000000000, MD5('x'))", func([][]byte) {}); err == nil {
		t.Fatal("the statement outlived its context")
	}
	db := target.(*mariadb.Target).DB()
	defer db.Close()
	var running int
	for range 50 {
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT BENCHMARK(%'").Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Error("the server still runs the statement 5 s after its context ended")
}
