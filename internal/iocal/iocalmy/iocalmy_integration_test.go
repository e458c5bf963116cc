//go:build integration

package iocalmy

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/observe"
	_ "github.com/calibra-bench/calibra/internal/observe/observemy"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
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
	// The page cleaner keeps innodb_lru_scan_depth pages free (1024 by
	// default, most of a 16 MB pool), which would evict even the index's
	// inner pages.
	target, err := mariadb.Prepare(context.Background(), mariadb.TargetConfig{Path: testenv.StorageDir(t), DBCache: "16MB",
		Settings: map[string]string{"innodb_lru_scan_depth": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	return target, testenv.Start(t, target)
}

// blockRows are n rows of one block each, as the calibration loads them.
func blockRows(n, blockSize int) io.Reader {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "%d\t%s\n", i, strings.Repeat(string(rune('a'+i%26)), blockSize-256))
	}
	return strings.NewReader(sb.String())
}

// The dialect's operations, and the layout they rely on: each block a
// page of its own, read by one lookup.
func TestDialect(t *testing.T) {
	t.Parallel()
	target, group := startMariaDB(t)
	ctx := context.Background()
	d, err := iocal.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CheckRights(ctx); err != nil {
		t.Errorf("the managed instance's own account may not create the database: %v", err)
	}
	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	blockSize, noFlush, err := conn.Server(ctx)
	if err != nil || blockSize != 16384 || noFlush != "" {
		t.Fatalf("server: block size %d, cannot flush because %q, %v", blockSize, noFlush, err)
	}
	if err := conn.ResetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	const rows = 1000
	data := iocal.Schema + ".data_0"
	if err := conn.Load(ctx, data, blockRows(rows, blockSize)); err != nil {
		t.Fatal(err)
	}
	if err := conn.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	// Every row's page but the one the first page's records spill into.
	if n, err := conn.Blocks(ctx, data, blockSize); err != nil || n != rows-1 {
		t.Fatalf("%s has %d blocks with rows (%v), want %d: one row a block", data, n, err, rows-1)
	}
	// InnoDB's own count of the clustered index's leaf pages: one a block.
	db := mariadb.Open(target.Managed.Config(""))
	defer db.Close()
	var leaves int64
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+data); err != nil {
		t.Fatal(err)
	}
	err = db.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
		WHERE database_name = ? AND table_name = 'data_0' AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'`, iocal.Schema).Scan(&leaves)
	if err != nil || leaves < rows || leaves > rows+rows/50 {
		t.Errorf("the table's leaf pages %d (%v), want %d: a page for each block", leaves, err, rows)
	}
	for _, b := range []int64{0, rows - 2} {
		if err := conn.ReadBlock(ctx, data, b); err != nil {
			t.Errorf("read block %d: %v", b, err)
		}
	}
	if err := conn.ReadBlock(ctx, data, rows); err == nil {
		t.Errorf("block %d holds no row, yet it was read", rows)
	}
	checkOnePageALookup(t, target, group, data, rows-1)
	if conn, err = d.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.ReadBlocks(ctx, data, 0, rows); err != nil {
		t.Error(err)
	}
	if err := conn.SaveMeta(ctx, 1<<30, 1); err != nil {
		t.Fatal(err)
	}
	if size, tables, err := conn.Meta(ctx); err != nil || size != 1<<30 || tables != 1 {
		t.Errorf("meta reads back %d bytes, %d tables, %v", size, tables, err)
	}
	// The commit loop commits as many as asked, each a row that stays.
	commits := iocal.Schema + ".w_commit"
	if err := conn.PrepareCommits(ctx, commits); err != nil {
		t.Fatal(err)
	}
	for _, first := range []int64{0, 5} {
		if lats, err := conn.Commits(ctx, commits, 7, first, 5, time.Minute); err != nil || len(lats) != 5 || slices.Min(lats) <= 0 {
			t.Fatalf("commits from %d: %v, %v; want 5 spans", first, lats, err)
		}
	}
	var committed int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT n) FROM "+commits+" WHERE committer = 7").Scan(&committed); err != nil || committed != 10 {
		t.Errorf("the commit table holds %d rows (%v), want the 10 committed", committed, err)
	}
	checkWrites(t, conn, db, blockSize)
	// The write test's tables go, and only they, with its pool.
	for _, w := range []string{"w_0", "w_1", "wa1"} {
		for _, create := range []bool{true, false} {
			ch := iocal.Chunk{Table: iocal.Schema + "." + w, Create: create, Empty: !create, N: 2, Width: blockSize - 256}
			if err := conn.WriteRows(ctx, pool, ch); err != nil {
				t.Fatalf("write %s (create %v): %v", w, create, err)
			}
		}
	}
	if err := conn.DropTables(ctx, "w_"); err != nil {
		t.Fatal(err)
	}
	for w, kept := range map[string]bool{"w_0": false, "w_1": false, "w_pool": false, "wa1": true, "data_0": true} {
		if _, err := conn.Blocks(ctx, iocal.Schema+"."+w, blockSize); (err == nil) != kept {
			t.Errorf("%s kept %v, want %v (%v)", w, err == nil, kept, err)
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'w_commit'", iocal.Schema).Scan(&committed); err != nil || committed != 0 {
		t.Errorf("the commit table is left (%d, %v)", committed, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?", iocal.Schema).Scan(&committed); err != nil || committed != 0 {
		t.Errorf("the commit loop is left (%d, %v)", committed, err)
	}
	if err := conn.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Meta(ctx); err == nil {
		t.Error("the database was dropped, yet its meta reads back")
	}
}

// pool is the write test's pool of random bytes, as iocal names it.
const pool = iocal.Schema + ".w_pool"

// checkWrites has the server create a table, append a chunk to it and
// write one after emptying it: each time the table holds exactly the
// chunks' records, five a block and a leaf page a block, every filler different (cut from random
// bytes, so the storage cannot shrink them).
func checkWrites(t *testing.T, w iocal.Conn, db *sql.DB, blockSize int) {
	t.Helper()
	ctx := context.Background()
	if err := w.PrepareWrites(ctx, pool); err != nil {
		t.Fatal(err)
	}
	table := iocal.Schema + ".w_9"
	// Created, appended to, emptied first.
	for _, c := range []struct {
		ch         iocal.Chunk
		from, rows int64
	}{
		{iocal.Chunk{Table: table, Create: true, N: 300}, 0, 300},
		{iocal.Chunk{Table: table, First: 300, N: 200}, 0, 500},
		{iocal.Chunk{Table: table, Empty: true, First: 500, N: 100}, 500, 100},
	} {
		ch := c.ch
		ch.Width = blockSize - 256
		if err := w.WriteRows(ctx, pool, ch); err != nil {
			t.Fatalf("write %+v: %v", ch, err)
		}
		var records, fillers, first int64
		err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT f), MIN(k) FROM "+table).Scan(&records, &fillers, &first)
		if want := 5 * c.rows; err != nil || records != want || fillers != want || first != 5*c.from {
			t.Errorf("after writing %+v, %s holds %d records from %d, %d distinct fillers (%v); want %d from %d", ch, table, records, first, fillers, err, want, 5*c.from)
		}
		var leaves int64
		if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
			t.Fatal(err)
		}
		err = db.QueryRowContext(ctx, `SELECT stat_value FROM mysql.innodb_index_stats
			WHERE database_name = ? AND table_name = 'w_9' AND index_name = 'PRIMARY' AND stat_name = 'n_leaf_pages'`, iocal.Schema).Scan(&leaves)
		if err != nil || leaves < c.rows || leaves > c.rows+c.rows/50 {
			t.Errorf("after writing %+v, %s has %d leaf pages (%v): want %d, a page a block", ch, table, leaves, err, c.rows)
		}
	}
}

// The tolerances of docs/iocal.md: at one committer the server's redo
// syncs are 0.8 to 1.3 a commit.
const syncsPerCommitLow, syncsPerCommitHigh = 0.8, 1.3

// Each commit of the server-side loop is durable before the committer's
// next starts: at one committer the redo log is synced once a commit, and
// at four no redo write covers more than one commit of each committer (a
// COMMIT in a procedure alone let 60 commits share a write).
func TestCommitsFlushEach(t *testing.T) {
	t.Parallel()
	target, _ := startMariaDB(t)
	ctx := context.Background()
	d, err := iocal.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]iocal.Conn, 4)
	for i := range conns {
		if conns[i], err = d.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
	}
	if err := conns[0].ResetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	table := iocal.Schema + ".w_commit"
	if err := conns[0].PrepareCommits(ctx, table); err != nil {
		t.Fatal(err)
	}
	db := mariadb.Open(target.Managed.Config(""))
	defer db.Close()
	// Innodb_os_log_fsyncs before 10.8; from 10.8 InnoDB counts the redo
	// log's syncs only in Innodb_data_fsyncs, with the data files' few.
	status := func() (writes, syncs int64) {
		rows, err := db.QueryContext(ctx, "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('INNODB_LOG_WRITES', 'INNODB_OS_LOG_FSYNCS', 'INNODB_DATA_FSYNCS') ORDER BY VARIABLE_NAME")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var v int64
			if err := rows.Scan(&name, &v); err != nil {
				t.Fatal(err)
			}
			switch name {
			case "INNODB_LOG_WRITES":
				writes = v
			default: // DATA_FSYNCS, then OS_LOG_FSYNCS where it exists
				syncs = v
			}
		}
		return writes, syncs
	}
	w0, s0 := status()
	lats, err := conns[0].Commits(ctx, table, 0, 0, 300, time.Minute)
	if err != nil || len(lats) != 300 {
		t.Fatalf("one committer: %d commits, %v; want 300", len(lats), err)
	}
	w1, s1 := status()
	if r := float64(s1-s0) / 300; r < syncsPerCommitLow || r > syncsPerCommitHigh {
		t.Errorf("one committer: %d redo syncs for 300 commits (%.2f each), want %.1f to %.1f", s1-s0, r, syncsPerCommitLow, syncsPerCommitHigh)
	}
	if w1-w0 < 300 {
		t.Errorf("one committer: %d redo writes for 300 commits, want one each", w1-w0)
	}
	const each = 200
	errs := make(chan error, len(conns))
	for i, c := range conns {
		go func() {
			lats, err := c.Commits(ctx, table, i+1, 0, each, time.Minute)
			if err == nil && len(lats) != each {
				err = fmt.Errorf("committer %d: %d commits, want %d", i+1, len(lats), each)
			}
			errs <- err
		}()
	}
	for range conns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	w2, _ := status()
	if commits := int64(len(conns) * each); (w2-w1)*int64(len(conns)) < commits {
		t.Errorf("%d committers: %d redo writes for %d commits, more than one commit of each committer a write", len(conns), w2-w1, commits)
	}
	t.Logf("one committer: %d redo writes, %d syncs for 300 commits; %d committers: %d writes for %d commits", w1-w0, s1-s0, len(conns), w2-w1, len(conns)*each)
}

// A calibration on a cold 16 MB buffer pool with four times as much data:
// random reads reach the files (and the device, where it is observable),
// scans and writes move data.
func TestCalibration(t *testing.T) {
	t.Parallel()
	target, group := startMariaDB(t)
	ctx := context.Background()
	s, err := observe.Start(ctx, observe.Config{Path: target.Managed.DataDir, Engine: target})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	env := iocal.Env{Prog: progress.New(testWriter{t}, progress.Auto, false), Edge: s.Edge, Window: s.Window, CacheBytes: 16 << 20,
		ColdStart: func(ctx context.Context) (bool, error) {
			var dropped bool
			err := s.Restart(func() error {
				var err error
				dropped, err = target.Restart(ctx, group)
				return err
			})
			return dropped, err
		}}
	// A warmup before each point, as by default: the write test's chunks
	// go on numbering their rows after it, into a table with a primary key.
	cfg := iocal.Config{SizeBytes: 64 << 20, Jobs: []int{1, 4}, Point: time.Second, Warmup: 200 * time.Millisecond, MaxLatency: time.Second,
		Tests: iocal.Tests, Seed: 1, Loaders: 2}
	out, err := iocal.Run(ctx, target, cfg, env)
	js, _ := json.MarshalIndent(out, "", " ")
	t.Logf("iocal %s", js)
	if err != nil {
		t.Fatal(err)
	}
	// Every test starts cold but the commit test, which reads nothing.
	if out.CacheDominated != "" || out.ColdStarts != len(iocal.Tests)-1 || out.BlockSizeBytes != 16384 {
		t.Errorf("cache dominated %q, cold starts %d, block size %d", out.CacheDominated, out.ColdStarts, out.BlockSizeBytes)
	}
	if out.RandomRead == nil || len(out.RandomRead.Points) != 2 || out.RandomRead.MaxIOPS == nil {
		t.Fatalf("random reads: %+v", out.RandomRead)
	}
	for _, p := range out.RandomRead.Points {
		// Each lookup reads its one page from the files unless the pool
		// holds it: the data is four times the buffer pool, so most do.
		if p.IOPS <= 0 || p.DBPS < 0.5*p.IOPS || p.DBPS > 1.2*p.IOPS || p.DBHitPct == nil {
			t.Errorf("random %d jobs: %.0f IOPS, %.0f data-file reads/s, hit %v%%: want most reads from the files, one page a lookup", p.Jobs, p.IOPS, p.DBPS, p.DBHitPct)
		}
		if p.DiskRIOPS != nil && *p.DiskRIOPS < p.IOPS/2 {
			t.Errorf("random %d jobs: %.0f IOPS, only %.0f reads/s reached the device (O_DIRECT)", p.Jobs, p.IOPS, *p.DiskRIOPS)
		}
	}
	for name, seq := range map[string]*results.IOCalSeq{"seqread": out.SeqRead, "seqwrite": out.SeqWrite} {
		if seq == nil || len(seq.Points) != 2 {
			t.Fatalf("%s: %+v", name, seq)
		}
		for _, p := range seq.Points {
			if p.MBPS <= 0 || p.DBPS <= 0 {
				t.Errorf("%s %d jobs: %.1f MB/s, %.0f blocks/s", name, p.Jobs, p.MBPS, p.DBPS)
			}
		}
	}
	// Nothing of the calibration is left.
	db := mariadb.Open(target.Managed.Config(""))
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", iocal.Schema).Scan(&n); err != nil || n != 0 {
		t.Errorf("the calibration database is left behind (%d, %v)", n, err)
	}
}

// testWriter shows the calibration's progress lines in the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkOnePageALookup restarts the server with a cold buffer pool and
// reads blocks one a query and many a query: each costs InnoDB one page
// read (Innodb_buffer_pool_reads), its B-tree's few inner pages aside,
// not two as when a lookup hits the first or last record of a page.
func checkOnePageALookup(t *testing.T, target *mariadb.Target, group *proc.Group, table string, blocks int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := target.Restart(ctx, group); err != nil {
		t.Fatal(err)
	}
	d, err := iocal.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	db := mariadb.Open(target.Managed.Config(""))
	defer db.Close()
	reads := func() int64 {
		var name string
		var n int64
		if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The root and the inner pages: the tree of 1000 pages has three.
	const inner = 4
	var list []int64
	for b := int64(1); b < blocks; b += 7 {
		list = append(list, b)
	}
	before := reads()
	for _, b := range []int64{0, 3, 5} {
		if err := conn.ReadBlock(ctx, table, b); err != nil {
			t.Fatal(err)
		}
	}
	n, err := conn.ReadRandom(ctx, table, list)
	if err != nil || n != int64(len(list)) {
		t.Fatalf("read %d blocks in one call: %d rows, %v", len(list), n, err)
	}
	if got, want := reads()-before, int64(3+len(list)); got < want || got > want+inner {
		t.Errorf("%d lookups from a cold buffer pool read %d pages, want %d to %d: one a lookup", 3+len(list), got, want, want+inner)
	}
}

// A --dsn account without RELOAD cannot wait for each commit's redo
// flush: the commit test refuses it in one sentence that says to grant
// RELOAD or leave wal out, before it creates anything.
func TestCommitsNeedReload(t *testing.T) {
	t.Parallel()
	target, _ := startMariaDB(t)
	ctx := context.Background()
	admin := mariadb.Open(target.Managed.Config(""))
	defer admin.Close()
	db := target.Config().DBName
	for _, s := range []string{"CREATE USER 'noreload'@'localhost'", "GRANT ALL ON `" + db + "`.* TO 'noreload'@'localhost'",
		"GRANT ALL ON `" + iocal.Schema + "`.* TO 'noreload'@'localhost'"} {
		if _, err := admin.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	dsn, err := mariadb.Prepare(ctx, mariadb.TargetConfig{DSN: "mysql://noreload@localhost/" + db + "?socket=" + target.Config().Addr})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, dsn)
	d, err := iocal.Dialects.For(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.ResetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	table := iocal.Schema + ".w_commit"
	err = c.PrepareCommits(ctx, table)
	var in *fault.InputError
	if !errors.As(err, &in) || !strings.Contains(in.Msg, "needs the RELOAD privilege") || !strings.Contains(in.Fix, "grant the --dsn account RELOAD") {
		t.Fatalf("PrepareCommits without RELOAD: %v, want the input error that says to grant RELOAD", err)
	}
	var tables int
	if err := admin.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", iocal.Schema).Scan(&tables); err != nil || tables != 0 {
		t.Errorf("left %d tables in %s (%v)", tables, iocal.Schema, err)
	}
}
