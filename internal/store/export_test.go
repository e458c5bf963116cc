package store

import (
	"database/sql"
	"testing"
)

// What the tests of package store_test (which run calibra's commands on a
// PostgreSQL store) use of the package's insides.
var (
	PGStore        = pgStore
	CopyRun        = copyRun
	OpenTemp       = openTemp
	OpenPostgresAt = openPostgres
)

// Count is the number a counting query on s's database answers.
func Count(t *testing.T, s *Store, query string) int { return count(t, s, query) }

// DB is s's database.
func DB(s *Store) *sql.DB { return s.db }
