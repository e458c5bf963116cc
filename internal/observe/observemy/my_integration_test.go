//go:build integration

package observemy

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// startMariaDB starts a throwaway managed instance with a small buffer
// pool, or skips when no server is installed unless CALIBRA_TEST_REQUIRE
// names mariadb.
func startMariaDB(t *testing.T) (*mariadb.Target, *proc.Group) {
	t.Helper()
	_, missing := mariadb.FindBinaries("")
	testenv.Need(t, "mariadb", missing, "apt-get install mariadb-server")
	target, err := mariadb.Prepare(context.Background(), mariadb.TargetConfig{Path: testenv.StorageDir(t), DBCache: "32MB"})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

func exec(t *testing.T, db *sql.DB, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestSamplerOnMariaDB runs known load on a real server: sessions that
// sleep, one that spins on CPU, one that commits, one that scans a table
// larger than the buffer pool and one that waits for another's row lock;
// the window must see each, in the counters and in the waits.
func TestSamplerOnMariaDB(t *testing.T) {
	target, group := startMariaDB(t)
	ctx := context.Background()
	db := target.DB()
	defer db.Close()
	// About 48 MB of rows, half a page each, past the 32 MB buffer pool.
	exec(t, db, "CREATE TABLE big (id int PRIMARY KEY, f varchar(8000)) ENGINE=InnoDB",
		"INSERT INTO big SELECT seq, REPEAT(CHAR(97 + seq % 26), 7000) FROM seq_1_to_6000",
		"CREATE TABLE w (i int PRIMARY KEY) ENGINE=InnoDB",
		"CREATE TABLE l (i int PRIMARY KEY, n int) ENGINE=InnoDB", "INSERT INTO l VALUES (1, 0)")

	s, err := observe.Start(ctx, observe.Config{Path: target.Managed.DataDir, Engine: target})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if limits := s.EngineLimits(); limits["db.data_file_read_avg_ms"] != "" || limits["db.timed_waits"] != "" {
		t.Errorf("performance_schema is on, yet the limits are %v", limits)
	}

	// An idle server: the polls see nothing (the sampler excludes itself),
	// and they count no transaction of calibra's account (tpm_db).
	tx0, err := target.Transactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	quiet := s.Edge()
	time.Sleep(500 * time.Millisecond)
	idle := s.Window(quiet, s.Edge())
	if tx1, err := target.Transactions(ctx); err != nil || tx1 != tx0 {
		t.Errorf("the sampler's polls moved the transaction count from %d to %d (%v)", tx0, tx1, err)
	}
	if len(idle.Waits) != 0 || idle.DB == nil || idle.DB.WaitSamples == 0 {
		t.Fatalf("an idle server: waits %+v, db %+v; want polls that see nothing", idle.Waits, idle.DB)
	}

	conns := make([]*sql.Conn, 7)
	for i := range conns {
		if conns[i], err = db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	do := func(c *sql.Conn, q string) {
		if _, err := c.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "max_statement_time") {
			t.Errorf("%s: %v", q, err)
		}
	}
	load := []func(c *sql.Conn){
		func(c *sql.Conn) { do(c, "SELECT SLEEP(1.5)") },
		func(c *sql.Conn) { do(c, "SELECT SLEEP(1.5)") },
		func(c *sql.Conn) {
			do(c, "SET STATEMENT max_statement_time=1.5 FOR SELECT BENCHMARK(10000000000, MD5('x'))")
		},
		func(c *sql.Conn) {
			for i := range 300 {
				do(c, "INSERT INTO w VALUES ("+strconv.Itoa(i)+")")
			}
		},
		func(c *sql.Conn) { do(c, "SELECT COUNT(*) FROM big WHERE f LIKE '%z%'") },
		func(c *sql.Conn) {
			do(c, "BEGIN")
			do(c, "UPDATE l SET n = n + 1 WHERE i = 1")
			// Held a second past the other's UPDATE: the sampler's 100 ms
			// polls, starved beside other loads, once caught none of a
			// half-second wait (15 polls in the window, none during it).
			time.Sleep(1200 * time.Millisecond)
			do(c, "COMMIT")
		},
		func(c *sql.Conn) {
			time.Sleep(200 * time.Millisecond) // after the lock is held
			do(c, "UPDATE l SET n = n + 1 WHERE i = 1")
		},
	}
	from := s.Edge()
	var wg sync.WaitGroup
	for i, f := range load {
		wg.Add(1)
		go func() { defer wg.Done(); f(conns[i]) }()
	}
	wg.Wait()
	o := s.Window(from, s.Edge())
	js, _ := json.Marshal(o)
	t.Logf("observe %s", js)

	byEvent := map[string]results.Wait{}
	for _, w := range o.Waits {
		byEvent[w.Class+":"+w.Event] = w
	}
	if w := byEvent["synch/cond:sql/Item_func_sleep::cond"]; w.Seconds < 2 || w.Seconds > 3.5 || w.AvgMs == nil || *w.AvgMs < 1000 {
		t.Errorf("two sessions slept 1.5 s each: %+v, want about 3 s, each wait timed about 1500 ms", w)
	}
	if w := byEvent["CPU:CPU"]; w.Seconds < 0.8 {
		t.Errorf("one session spun 1.5 s on CPU: %+v", w)
	}
	d := o.DB
	if d.ActiveSessionsAvg == nil || *d.ActiveSessionsAvg < 2 {
		t.Errorf("active sessions %v, want about 3.5", d.ActiveSessionsAvg)
	}
	grew := func(name string, v *int64, floor int64) {
		if v == nil || *v < floor {
			t.Errorf("%s %v, want at least %d (missing %q)", name, v, floor, o.Missing["db."+name])
		}
	}
	// The scan reads most of the table's 3000 pages from the files, some
	// by read-ahead: the reads on demand are fewer than the file reads.
	grew("data_reads", d.DataReads, 1000)
	grew("data_read_bytes", d.DataReadBytes, 1000*16384)
	grew("blks_read", d.BlksRead, 1)
	grew("blks_hit", d.BlksHit, 1)
	grew("wal_writes", d.WALWrites, 100) // 300 commits, some grouped
	grew("wal_syncs", d.WALSyncs, 100)   // a sync each write, in Innodb_data_fsyncs from 10.8
	grew("wal_bytes", d.WALBytes, 300*50)
	grew("row_lock_waits", d.RowLockWaits, 1)
	if d.HitPct == nil || d.DataFileReadAvgMs == nil || d.RowLockAvgMs == nil || *d.RowLockAvgMs < 200 {
		t.Errorf("hit %v, data-file read avg %v, row lock avg %v (want about 1000 ms); missing %v", d.HitPct, d.DataFileReadAvgMs, d.RowLockAvgMs, o.Missing)
	}
	if w := byEvent["lock/row:innodb/row_lock"]; w.Seconds < 0.2 || w.AvgMs == nil {
		t.Errorf("one session waited 1 s for a row lock: %+v", w)
	}
	timed := map[string]bool{}
	for _, w := range d.TimedWaits {
		timed[w.Class+":"+w.Event] = true
	}
	if !timed["io/file:innodb/innodb_data_file"] {
		t.Errorf("the server timed no data-file I/O: %+v", d.TimedWaits)
	}
	for _, k := range []string{"db.wal_write_avg_ms", "db.checkpoints", "db.client_reads"} {
		if s.EngineLimits()[k] == "" || o.Missing[k] != "" {
			t.Errorf("%s: engine limit %q, window's missing %q: want it said once for the run", k, s.EngineLimits()[k], o.Missing[k])
		}
	}
	if o.CPUBusyPct == nil {
		t.Errorf("no cpu_busy_pct: %v", o.Missing)
	}

	// The managed server is local: its pid comes from its pid file, checked
	// against its process.
	src, err := observe.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	c, info, err := src.Open(ctx, "/proc")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	pidFile, err := os.ReadFile(filepath.Join(target.Managed.DataDir, "mariadbd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(info.ServerPID) != strings.TrimSpace(string(pidFile)) {
		t.Errorf("the local server's pid %d, want the pid file's %s", info.ServerPID, pidFile)
	}
	// Reached by DSN on its local socket, the same server is found.
	cfg := target.Config()
	dsn, err := mariadb.Prepare(ctx, mariadb.TargetConfig{DSN: "mysql://" + cfg.User + "@localhost/" + cfg.DBName + "?socket=" + cfg.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if src, err = observe.Dialects.For(dsn); err != nil {
		t.Fatal(err)
	}
	if c, info, err = src.Open(ctx, "/proc"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if strconv.Itoa(info.ServerPID) != strings.TrimSpace(string(pidFile)) || info.Database != mariadb.Database {
		t.Errorf("by DSN: the local server's pid %d, want %s; database %q", info.ServerPID, pidFile, info.Database)
	}

	// A restart by calibra: the sampler sits it out and reconnects.
	for _, c := range conns {
		c.Close()
	}
	db.Close()
	before := s.Edge()
	if err := s.Restart(func() error { _, err := target.Restart(ctx, group); return err }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	w := s.Window(before, s.Edge())
	if w.DB == nil || w.DB.WaitSamples == 0 || w.DB.WaitSamplesFailed != 0 || w.Missing["db"] != "" {
		t.Fatalf("a window across a restart by calibra: db %+v, missing %v; want no failed poll and the counters read", w.DB, w.Missing)
	}
	if _, reset := w.Missing["db.blks_hit"]; !reset {
		t.Errorf("the restart reset the counters, yet blks_hit is %v", w.DB.BlksHit)
	}
}
