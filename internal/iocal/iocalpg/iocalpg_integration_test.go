//go:build integration

package iocalpg

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestDialectOnEveryVersion runs the dialect's operations on each server
// version installed (Debian's 15, the relocatable 18 of .ci/setup): 16+
// extend a relation by many blocks during COPY, which Blocks must see
// past.
func TestDialectOnEveryVersion(t *testing.T) {
	builds := postgres.Installed()
	testenv.NeedVersions(t, "postgresql", postgres.Majors(builds), "apt-get install postgresql")
	for _, b := range builds {
		t.Run(fmt.Sprint(b.Major), func(t *testing.T) { checkDialect(t, b) })
	}
}

// blockRows are n rows of one block each, as the calibration loads them.
func blockRows(n, blockSize int) io.Reader {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "%d\t%s\n", i, strings.Repeat(string(rune('a'+i%26)), blockSize-256))
	}
	return strings.NewReader(sb.String())
}

func checkDialect(t *testing.T, b postgres.Binaries) {
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: testenv.StorageDir(t), PGBin: b.Dir})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	d, err := iocal.Dialects.For(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CheckRights(ctx); err != nil {
		t.Errorf("the managed instance's own role may not create the schema: %v", err)
	}
	conn, err := d.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	blockSize, noFlush, err := conn.Server(ctx)
	if err != nil || blockSize != 8192 || noFlush != "" {
		t.Fatalf("server: block size %d, cannot flush because %q, %v", blockSize, noFlush, err)
	}
	// io_method came with 18: its default there, nothing before.
	want := map[bool]string{true: "worker", false: ""}[b.Major >= 18]
	if m, err := conn.(iocal.IOMethoder).IOMethod(ctx); err != nil || m != want {
		t.Errorf("io_method %q (%v) on %d, want %q", m, err, b.Major, want)
	}
	if err := conn.ResetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	const rows = 1000
	data := iocal.Schema + ".data_0"
	if err := conn.Load(ctx, data, blockRows(rows, blockSize)); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Blocks(ctx, data, blockSize); err != nil || n != rows {
		t.Fatalf("%s has %d blocks with rows (%v), want %d: one row a block", data, n, err, rows)
	}
	for _, b := range []int64{0, rows - 1} {
		if err := conn.ReadBlock(ctx, data, b); err != nil {
			t.Errorf("read block %d: %v", b, err)
		}
	}
	if err := conn.ReadBlock(ctx, data, rows); err == nil {
		t.Errorf("block %d holds no row, yet it was read", rows)
	}
	if err := conn.ReadBlocks(ctx, data, 0, rows); err != nil {
		t.Error(err)
	}
	if err := conn.Flush(ctx); err != nil {
		t.Error(err)
	}
	if err := conn.SaveMeta(ctx, 1<<30, 1); err != nil {
		t.Fatal(err)
	}
	if size, tables, err := conn.Meta(ctx); err != nil || size != 1<<30 || tables != 1 {
		t.Errorf("meta reads back %d bytes, %d tables, %v", size, tables, err)
	}

	commits := iocal.Schema + ".w_commit"
	checkCommits(t, conn, commits)

	checkWrites(t, conn, blockSize)
	// The write test's tables go, and only they: "wa1" does not start
	// with "w_" (a LIKE pattern's "_" matches any character); so do the
	// commit loop, the write test's pool and its procedure.
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
	for w, kept := range map[string]bool{"w_0": false, "w_1": false, "wa1": true, "data_0": true} {
		if _, err := conn.Blocks(ctx, iocal.Schema+"."+w, blockSize); (err == nil) != kept {
			t.Errorf("%s kept %v, want %v (%v)", w, err == nil, kept, err)
		}
	}
	if _, err := conn.Commits(ctx, commits, 0, 0, 1, time.Second); err == nil {
		t.Error("the commit loop is left after DropTables")
	}
	ch := iocal.Chunk{Table: iocal.Schema + ".w_0", Create: true, N: 1, Width: blockSize - 256}
	if err := conn.WriteRows(ctx, pool, ch); err == nil {
		t.Error("the write test's procedure is left after DropTables")
	}
	if err := conn.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Meta(ctx); err == nil {
		t.Error("the schema was dropped, yet its meta reads back")
	}
}

// pool is the write test's pool of random bytes, as iocal names it.
const pool = iocal.Schema + ".w_pool"

// checkWrites has the server create a table, append a chunk to it and
// write one after emptying it: each time the table holds exactly the
// chunks' rows, one a block, every filler different (cut from random
// bytes, so the storage cannot shrink them).
func checkWrites(t *testing.T, w iocal.Conn, blockSize int) {
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
		if n, err := w.Blocks(ctx, table, blockSize); err != nil || n != c.rows {
			t.Errorf("after writing %+v, %s has %d blocks with rows (%v); want %d, one a row", ch, table, n, err, c.rows)
		}
		var rows, fillers, first, width int64
		err := w.(conn).QueryRow(ctx, "SELECT count(*), count(DISTINCT filler), min(id), min(length(filler)) FROM "+table).Scan(&rows, &fillers, &first, &width)
		if err != nil || rows != c.rows || fillers != c.rows || first != c.from || width != int64(ch.Width) {
			t.Errorf("after writing %+v, %s holds %d rows from %d, %d distinct fillers of %d bytes (%v); want %d from %d",
				ch, table, rows, first, fillers, width, err, c.rows, c.from)
		}
	}
}

// checkCommits has the server loop commits: each a transaction of its
// own that stays (a row each, numbered on from first), as many as asked,
// each timed.
func checkCommits(t *testing.T, c iocal.Conn, table string) {
	t.Helper()
	ctx := context.Background()
	if err := c.PrepareCommits(ctx, table); err != nil {
		t.Fatal(err)
	}
	var lats []time.Duration
	for _, first := range []int64{0, 5} {
		l, err := c.Commits(ctx, table, 7, first, 5, time.Minute)
		if err != nil || len(l) != 5 {
			t.Fatalf("commits from %d: %d spans, %v; want 5", first, len(l), err)
		}
		lats = append(lats, l...)
	}
	for i, l := range lats {
		if l <= 0 {
			t.Errorf("commit %d took %s", i, l)
		}
	}
	// The rows are there, numbered on: each commit was real.
	var n, distinct int64
	if err := c.(conn).QueryRow(ctx, "SELECT count(*), count(DISTINCT n) FROM "+table+" WHERE committer = 7").Scan(&n, &distinct); err != nil || n != 10 || distinct != 10 {
		t.Errorf("the table holds %d rows, %d distinct (%v); want the 10 committed", n, distinct, err)
	}
}
