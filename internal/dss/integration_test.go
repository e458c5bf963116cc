package dss_test

import (
	"context"
	"testing"

	_ "github.com/calibra-bench/calibra/internal/dss/dsspg"
	"github.com/calibra-bench/calibra/internal/dss/dsstest"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startTarget starts a managed instance on a directory the server account
// can reach, stopped when the test ends.
func startTarget(t *testing.T) (engine.Engine, *proc.Group) {
	t.Helper()
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{Path: testenv.StorageDir(t), MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

// TestQueriesAgainstDuckDB is dsstest's check on a real PostgreSQL.
func TestQueriesAgainstDuckDB(t *testing.T) {
	dsstest.Run(t, dsstest.Suite{
		Start:  startTarget,
		Serial: func(p map[string]string) bool { return p["max_parallel_workers_per_gather"] == "0" },
	})
}
