package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
)

// The conformance suite on every PostgreSQL version installed here:
// Debian's 15 and the relocatable 18 .ci/setup adds.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real PostgreSQL servers; run without -short")
	}
	builds := Installed()
	require := os.Getenv("CALIBRA_TEST_REQUIRE")
	switch {
	case len(builds) == 0 && strings.Contains(require, "postgres"):
		t.Fatal("PostgreSQL is required here: apt-get install postgresql")
	case len(builds) == 0:
		t.Skip("no PostgreSQL server installed (apt-get install postgresql)")
	case strings.Contains(require, "postgres18") && builds[0].Major < 18:
		t.Fatalf("PostgreSQL 18 is required here (.ci/setup installs it under /opt/calibra): found %v", builds)
	}
	for _, b := range builds {
		t.Run(fmt.Sprintf("postgresql%d", b.Major), func(t *testing.T) {
			enginetest.Run(t, suite(b))
		})
	}
}

func suite(b Binaries) enginetest.Suite {
	connect := func(ctx context.Context, e engine.Engine) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, e.(*Target).ConnConfig())
	}
	return enginetest.Suite{
		Open: func(t *testing.T, path string) engine.Engine {
			e, err := engine.Open(context.Background(), Name, engine.Config{Path: path, Bin: b.Dir})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		Exec: func(ctx context.Context, e engine.Engine, sql string) error {
			conn, err := connect(ctx, e)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, sql)
			return err
		},
		Count: func(ctx context.Context, e engine.Engine, table string) (int64, error) {
			conn, err := connect(ctx, e)
			if err != nil {
				return 0, err
			}
			defer conn.Close(ctx)
			var n int64
			return n, conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		},
		Setting: "shared_buffers",
		Value:   DefaultDBCache,
		OpenDSN: func(password string) (engine.Engine, error) {
			return engine.Open(context.Background(), Name, engine.Config{DSN: "postgres://bench:" + password + "@127.0.0.1:1/bench"})
		},
	}
}
