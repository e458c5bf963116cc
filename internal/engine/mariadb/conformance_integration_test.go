package mariadb

import (
	"context"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The conformance suite on the MariaDB server installed here (Debian's
// mariadb-server, which .ci/setup installs).
// The tests that only read a running server and write tables of their own
// run on the shared instance.
func TestConformance(t *testing.T) {
	t.Parallel()
	requireServer(t)
	s := suite()
	s.Shared = true
	enginetest.Run(t, s)
	enginetest.RunShared(t, s, sharedManaged(t))
}

// requireServer skips a test that needs a MariaDB server where none is
// installed, unless CALIBRA_TEST_REQUIRE names mariadb: then it fails.
func requireServer(t *testing.T) {
	t.Helper()
	_, missing := FindBinaries("")
	testenv.Need(t, "mariadb", missing, "apt-get install mariadb-server")
}

func suite() enginetest.Suite {
	return enginetest.Suite{
		// The tests on instances of their own do not care about the
		// cache: 128MB, whose redo log is written at init in an eighth
		// of the default's time. The settings test reads the shared
		// instance, which has the default.
		Open: func(t *testing.T, path string) engine.Engine {
			e, err := engine.Open(context.Background(), Name, engine.Config{Path: path, DBCache: "128MB"})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		Exec: func(ctx context.Context, e engine.Engine, sql string) error {
			db := e.(*Target).DB()
			defer db.Close()
			_, err := db.ExecContext(ctx, sql)
			return err
		},
		Count: func(ctx context.Context, e engine.Engine, table string) (int64, error) {
			db := e.(*Target).DB()
			defer db.Close()
			var n int64
			return n, db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
		},
		Setting: "innodb_buffer_pool_size",
		Value:   "1073741824", // DefaultDBCache, the shared instance's, in bytes as MariaDB prints it
		OpenDSN: func(password string) (engine.Engine, error) {
			return engine.Open(context.Background(), Name, engine.Config{DSN: "mysql://bench:" + password + "@127.0.0.1:1/bench"})
		},
	}
}
