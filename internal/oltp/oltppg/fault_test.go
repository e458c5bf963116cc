package oltppg

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/oltp"
)

func TestServerFaultStopsOnlyOnStorageAndServerFailures(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string // fragment of the fault; empty for none
	}{
		{"success", nil, ""},
		{"expected rollback", oltp.ErrRolledBack, ""},
		{"deadlock goes on", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}, ""},
		{"serialization goes on", &pgconn.PgError{Code: "40001"}, ""},
		{"disk full", fmt.Errorf("new_order: %w", &pgconn.PgError{Code: "53100", Message: `could not extend file "base/1/2": No space left on device`}),
			"the disk under the database is full (could not extend file"},
		{"I/O error", &pgconn.PgError{Code: "58030", Message: "could not read block 7"}, "the storage under the database failed (58030"},
		{"crash shutdown", &pgconn.PgError{Code: "57P02", Message: "terminating connection because of crash of another server process"},
			"the server stopped (terminating connection"},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, "the server stopped"},
		{"a broken connection without a pgx conn", errors.New("unexpected EOF"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := serverFault(c.err, nil)
			switch {
			case c.want == "" && f != nil:
				t.Errorf("fault %v, want the run to go on", f)
			case c.want != "" && (f == nil || !strings.Contains(f.Error(), c.want)):
				t.Errorf("fault %v, want %q", f, c.want)
			}
		})
	}
	if got := (session{}).ErrorClass(&pgconn.PgError{Code: "53100"}); got != "53100" {
		t.Errorf("class %q, want the SQLSTATE", got)
	}
	if got := (session{}).ErrorClass(errors.New("conn closed")); got != "connection" {
		t.Errorf("class %q, want connection", got)
	}
}
