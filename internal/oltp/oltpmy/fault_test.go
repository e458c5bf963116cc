package oltpmy

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/oltp"
)

func TestServerFaultStopsOnlyOnStorageAndServerFailures(t *testing.T) {
	cases := []struct {
		name string
		err  error
		lost bool
		want string // fragment of the fault; empty for none
	}{
		{"success", nil, false, ""},
		{"expected rollback", oltp.ErrRolledBack, false, ""},
		{"deadlock goes on", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}, false, ""},
		{"lock wait timeout goes on", &mysql.MySQLError{Number: 1205}, false, ""},
		{"table full", fmt.Errorf("new_order: %w", &mysql.MySQLError{Number: 1114, Message: "The table 'order_line' is full"}),
			false, "the disk under the database is full (1114 The table 'order_line' is full)"},
		{"disk full", &mysql.MySQLError{Number: 1021, Message: "Disk full (/tmp/x); waiting for someone to free some space..."}, false, "is full"},
		{"write failed for want of space", &mysql.MySQLError{Number: 3, Message: "Error writing file '/tmp/MYx' (Errcode: 28 \"No space left on device\")"},
			false, "the disk under the database is full"},
		{"write failed", &mysql.MySQLError{Number: 3, Message: "Error writing file '/tmp/MYx' (Errcode: 5 \"Input/output error\")"},
			false, "the storage under the database failed (3 "},
		{"engine error", &mysql.MySQLError{Number: 1030, Message: "Got error 5 \"Input/output error\" from storage engine InnoDB"},
			false, "the storage under the database failed"},
		{"shutdown", &mysql.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, false, "the server stopped (1053"},
		{"killed", &mysql.MySQLError{Number: 1927, Message: "Connection was killed"}, false, "the server stopped"},
		{"connection lost", mysql.ErrInvalidConn, true, "the connection to the server was lost"},
		{"an error on a live connection", errors.New("sql: no rows in result set"), false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := serverFault(c.err, c.lost || connectionLost(c.err))
			switch {
			case c.want == "" && f != nil:
				t.Errorf("fault %v, want the run to go on", f)
			case c.want != "" && (f == nil || !strings.Contains(f.Error(), c.want)):
				t.Errorf("fault %v, want %q", f, c.want)
			}
		})
	}
	for _, err := range []error{mysql.ErrInvalidConn, driver.ErrBadConn, &mysql.MySQLError{Number: 2013}} {
		if !connectionLost(fmt.Errorf("payment: %w", err)) {
			t.Errorf("%v does not end the connection", err)
		}
	}
	s := &session{}
	if got := s.ErrorClass(&mysql.MySQLError{Number: 1213, SQLState: [5]byte{'4', '0', '0', '0', '1'}}); got != "40001/1213" {
		t.Errorf("class %q, want the SQLSTATE and the error number", got)
	}
	if got := s.ErrorClass(errors.New("invalid connection")); got != "connection" {
		t.Errorf("class %q, want connection", got)
	}
}

// On a Galera node a conflict (1213) is retried a few times and classed
// "certification"; elsewhere it is a deadlock, returned at once.
func TestGaleraConflictsAreRetriedAndClassed(t *testing.T) {
	conflict := &mysql.MySQLError{Number: 1213, SQLState: [5]byte{'4', '0', '0', '0', '1'}, Message: "Deadlock found when trying to get lock; try restarting transaction"}
	failing := func(times int) (func() error, *int) {
		calls := 0
		return func() error {
			calls++
			if calls <= times {
				return conflict
			}
			return nil
		}, &calls
	}
	node := &session{galera: true}
	f, calls := failing(2)
	if err := node.retry(f); err != nil || *calls != 3 {
		t.Errorf("two conflicts then success: %v after %d calls, want success after 3", err, *calls)
	}
	if class, n := node.Retried(); class != "certification" || n != 2 {
		t.Errorf("Retried says %d %s, want 2 certification", n, class)
	}
	f, calls = failing(100)
	if err := node.retry(f); err == nil || *calls != maxCertRetries+1 {
		t.Errorf("endless conflicts: %v after %d calls, want the conflict after %d", err, *calls, maxCertRetries+1)
	}
	if got := node.ErrorClass(conflict); got != "certification" {
		t.Errorf("a node's conflict is classed %q", got)
	}
	single := &session{}
	f, calls = failing(1)
	if err := single.retry(f); err == nil || *calls != 1 {
		t.Errorf("a single server retried a deadlock: %v after %d calls", err, *calls)
	}
	if got := single.ErrorClass(conflict); got != "40001/1213" {
		t.Errorf("a single server's deadlock is classed %q", got)
	}
	var _ oltp.Retrier = node
}
