//go:build integration

package postgres

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The conformance suite on every PostgreSQL version installed here:
// Debian's 15 and the relocatable 18 .ci/setup adds.
func TestConformance(t *testing.T) {
	t.Parallel()
	builds := Installed()
	testenv.NeedVersions(t, "postgresql", Majors(builds), "apt-get install postgresql")
	s := enginetest.Suite{Engine: Name, DB: func(e engine.Engine) *sql.DB { return stdlib.OpenDB(*e.(*Target).ConnConfig()) },
		Setting: "shared_buffers", Value: DefaultDBCache, DSN: "postgres://bench:%s@127.0.0.1:1/bench"}
	for _, b := range builds {
		s.Versions = append(s.Versions, enginetest.Version{Name: fmt.Sprintf("postgresql%d", b.Major), Options: map[string]string{binFlag: b.Dir}})
	}
	enginetest.Run(t, s)
}
