package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The conformance suite on every PostgreSQL version installed here:
// Debian's 15 and the relocatable 18 .ci/setup adds.
func TestConformance(t *testing.T) {
	t.Parallel()
	builds := Installed()
	testenv.NeedVersions(t, "postgres", Majors(builds), "apt-get install postgresql")
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
			e, err := engine.Open(context.Background(), Name, engine.Config{Path: path, Options: map[string]string{binFlag: b.Dir}})
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
