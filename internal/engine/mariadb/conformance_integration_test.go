//go:build integration

package mariadb

import (
	"database/sql"
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

// suite is MariaDB's. The tests on instances of their own do not care
// about the cache: 128MB, whose redo log is written at init in an eighth
// of the default's time. The settings test reads the shared instance,
// which has the default (DefaultDBCache, in bytes as MariaDB prints it).
func suite() enginetest.Suite {
	return enginetest.Suite{Engine: Name, Config: engine.Config{DBCache: "128MB"}, DB: func(e engine.Engine) *sql.DB { return e.(*Target).DB() },
		Setting: "innodb_buffer_pool_size", Value: "1073741824", DSN: "mysql://bench:%s@127.0.0.1:1/bench"}
}
