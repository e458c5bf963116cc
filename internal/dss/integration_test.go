package dss_test

import (
	"context"
	"os"
	"testing"
	"time"

	_ "github.com/calibra-bench/calibra/internal/dss/dsspg"
	"github.com/calibra-bench/calibra/internal/dss/dsstest"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/proc"
)

// startTarget starts a managed instance on a directory the server account
// can reach, stopped when the test ends.
func startTarget(t *testing.T) (engine.Engine, *proc.Group) {
	t.Helper()
	_, err := postgres.FindBinaries("")
	dsstest.Need(t, "postgres", "no PostgreSQL server installed (apt-get install postgresql)", err)
	dir, err := os.MkdirTemp("", "calibra-dss-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	group := proc.NewGroup()
	target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{Path: dir, MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = target.Stop()
		_ = group.StopAll(time.Minute)
		_ = os.RemoveAll(dir)
	})
	if _, err := target.Start(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	return target, group
}

// TestQueriesAgainstDuckDB is dsstest's check on a real PostgreSQL.
func TestQueriesAgainstDuckDB(t *testing.T) {
	dsstest.Run(t, dsstest.Suite{
		Start:  startTarget,
		Serial: func(p map[string]string) bool { return p["max_parallel_workers_per_gather"] == "0" },
	})
}
