package durability

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// A failed recovery is named by what the server said: the messages are
// PostgreSQL's and InnoDB's own.
func TestClassifyFailedRecoveries(t *testing.T) {
	// A --path with a space and the words of a finding in it.
	place := "/srv/a-torn-page/checksum corrupt"
	cases := []struct {
		err      error
		fallback Class
		want     Class
	}{
		{&RecoveryError{Class: FilesGone, Err: errors.New("the data directory /lab/calibra-pg is gone")}, NoRestart, FilesGone},
		{fmt.Errorf("start: %w", &RecoveryError{Class: NoRestart, Err: errors.New("mount: wrong fs type")}), Corrupt, NoRestart},
		{errors.New(`the PostgreSQL server exited while starting: PANIC:  could not locate a valid checkpoint record`), NoRestart, Corrupt},
		{errors.New(`FATAL:  incorrect checksum in control file`), NoRestart, Corrupt},
		{errors.New(`ERROR:  invalid page in block 7 of relation base/16384/16390`), Corrupt, Corrupt},
		{errors.New(`the MariaDB server exited while starting: [ERROR] InnoDB: Database page corruption on disk or a failed read of file './calibra/orders.ibd' page [page id: space=5, page number=3]`), NoRestart, Corrupt},
		{errors.New(`the MariaDB server exited while starting: [ERROR] InnoDB: Missing FILE_CHECKPOINT at 43012 between the checkpoint 42000 and the end 51200.`), NoRestart, Corrupt},
		{errors.New(`FATAL:  could not open file "global/pg_control": No such file or directory`), NoRestart, FilesGone},
		{errors.New(`[ERROR] InnoDB: Tablespace 5 was not found at ./calibra/orders.ibd.`), NoRestart, FilesGone},
		{errors.New(`Error 1146 (42S02): Table 'calibra.orders' doesn't exist in engine`), Corrupt, FilesGone},
		{errors.New(`initdb: could not change permissions of directory: Permission denied`), NoRestart, NoRestart},
		{errors.New(`the MariaDB server did not accept connections within 5m0s`), NoRestart, NoRestart},
		{errors.New(`read tcp: connection reset by peer`), Corrupt, Corrupt},
		// The words of a path (a --path, a socket, a file name) are no
		// finding: only what the server says of them.
		{errors.New(`the PostgreSQL server exited while starting: FATAL:  could not create lock file "/srv/torn-corrupt-checksum/calibra-pg/.s.PGSQL.5432.lock": Permission denied`), NoRestart, NoRestart},
		{errors.New(`the MariaDB server exited while starting: [ERROR] Can't start server : Bind on unix socket: File name too long [ERROR] Do you already have another server running on socket: /srv/a-torn-page/checksum corrupt/calibra-mariadb-galera-1-tmp/mysqld.sock ?`), NoRestart, NoRestart},
		{errors.New(`the MariaDB server exited while starting: [ERROR] InnoDB: Operating system error number 2 in a file operation. [ERROR] InnoDB: The error means the system cannot find the path specified. [ERROR] InnoDB: Cannot open datafile for read-only: '/srv/torn dir/calibra/orders.ibd'`), NoRestart, FilesGone},
		{errors.New(`mariadbd --wsrep-recover: exit status 1: [ERROR] mariadbd: File './torn/corrupt.ibd' not found (Errcode: 13 "Permission denied")`), NoRestart, NoRestart},
		{errors.New(`mkdir /lab/torn-checksum/x: invalid page size`), NoRestart, Corrupt},
		{errors.New(`FATAL:  invalid page in block 7 of relation "/srv/torn/base/16384/16390"`), NoRestart, Corrupt},
	}
	for _, c := range cases {
		if got := classify(c.err, c.fallback, place); got != c.want {
			t.Errorf("%v (fallback %s): %s, want %s", c.err, c.fallback, got, c.want)
		}
	}
}

// A server that refused to recover or to read its data counts the pages it
// named: each invalid block, one for a page named without a number, none
// when it named a log record or a missing file.
func TestPagesNamed(t *testing.T) {
	for msg, want := range map[string]int64{
		`FATAL:  incorrect checksum in control file`: 1,
		`[ERROR] InnoDB: Database page corruption on disk or a failed read of file './calibra/stock.ibd' page [page id: space=7, page number=40]`:                                      1,
		`[ERROR] InnoDB: Cannot apply log to [page id: space=9, page number=0] of corrupted file | [ERROR] InnoDB: Plugin initialization aborted with error Data structure corruption`: 1,
		`[ERROR] InnoDB: Plugin initialization aborted with error Data structure corruption`:                                                                                           0,
		`PANIC:  could not locate a valid checkpoint record`:                                                                                                                           0,
		`[ERROR] InnoDB: Unable to apply log to corrupted page 659 in file ./calibra/stock.ibd`:                                                                                        1,
		`FATAL:  could not open file "global/pg_control": No such file or directory`:                                                                                                   0,
		`ERROR:  invalid page in block 7 of relation base/16384/16390; CONTEXT: WAL redo; ERROR:  invalid page in block 9 of relation base/16384/16390`:                                2,
	} {
		if got := pagesNamed(msg); got != want {
			t.Errorf("pagesNamed(%q) = %d, want %d", msg, got, want)
		}
	}
}

// A cycle's outcome is the worst it found.
func TestOutcomeIsTheWorstFinding(t *testing.T) {
	broken := &results.Consistency{OK: false}
	tore := &results.TornCut{InFlight: 3, Torn: 2}
	cases := []struct {
		c      results.DurabilityCycle
		failed Class
		want   Class
	}{
		{results.DurabilityCycle{Acknowledged: 10}, "", Durable},
		{results.DurabilityCycle{Acknowledged: 10, CommittedUnacknowledged: 2}, "", InFlight},
		{results.DurabilityCycle{Acknowledged: 10, LostAcknowledged: 1, CommittedUnacknowledged: 2}, "", LostAcknowledged},
		{results.DurabilityCycle{Acknowledged: 10, LostAcknowledged: 1, Consistency: broken}, "", Corrupt},
		{results.DurabilityCycle{Acknowledged: 10, PagesDamaged: 1}, "", TornPage},
		{results.DurabilityCycle{Acknowledged: 10, LostAcknowledged: 1, PagesDamaged: 2}, "", TornPage},
		{results.DurabilityCycle{Acknowledged: 10, PagesDamaged: 1, Consistency: broken}, "", Corrupt},
		{results.DurabilityCycle{Acknowledged: 10, LostAcknowledged: 10}, FilesGone, FilesGone},
		// A cut that tore writes and left a named damaged page is torn-page,
		// whether the server then refused its data or broke a condition.
		{results.DurabilityCycle{Acknowledged: 10, UnverifiableAcknowledged: 10, PagesDamaged: 1, Torn: tore}, Corrupt, TornPage},
		{results.DurabilityCycle{Acknowledged: 10, PagesDamaged: 1, Consistency: broken, Torn: tore}, "", TornPage},
		{results.DurabilityCycle{Acknowledged: 10, UnverifiableAcknowledged: 10, Torn: tore}, Corrupt, Corrupt},
		{results.DurabilityCycle{Acknowledged: 10, UnverifiableAcknowledged: 10, PagesDamaged: 1, Torn: tore}, NoRestart, NoRestart},
		{results.DurabilityCycle{Acknowledged: 10, UnverifiableAcknowledged: 10, PagesDamaged: 1, Torn: &results.TornCut{InFlight: 3}}, Corrupt, Corrupt},
	}
	for _, c := range cases {
		if got := outcome(&c.c, c.failed); got != c.want {
			t.Errorf("%+v, failed %q: %s, want %s", c.c, c.failed, got, c.want)
		}
	}
}

// What fails a run: missing and unverifiable acknowledged commits and
// damaged pages, each unless a threshold names its figure.
func TestFailures(t *testing.T) {
	d := &results.Durability{Acknowledged: 30, LostAcknowledged: 1, UnverifiableAcknowledged: 12, PagesDamaged: 2}
	none := func(string) bool { return false }
	got := Failures(d, none)
	want := []string{"1 acknowledged commit missing after its recovery", "12 acknowledged commits that could not be verified", "2 damaged pages"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Failures = %q, want %q", got, want)
	}
	lost := func(m string) bool { return m == "lost_acknowledged" }
	if got := Failures(d, lost); len(got) != 2 || strings.Contains(strings.Join(got, " "), "missing") {
		t.Errorf("with a threshold on lost_acknowledged: %q, want the other two only", got)
	}
	if got := Failures(&results.Durability{Acknowledged: 30, PresentAcknowledged: 30}, none); len(got) != 0 {
		t.Errorf("a clean audit: %q, want nothing", got)
	}
}
