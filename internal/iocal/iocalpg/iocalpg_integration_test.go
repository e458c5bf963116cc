package iocalpg

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

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
	testenv.NeedVersions(t, "postgres", postgres.Majors(builds), "apt-get install postgresql")
	for _, b := range builds {
		t.Run(fmt.Sprint(b.Major), func(t *testing.T) { checkDialect(t, b.Dir) })
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

func checkDialect(t *testing.T, pgBin string) {
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: testenv.StorageDir(t), PGBin: pgBin})
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
	if err := conn.ResetSchema(ctx); err != nil {
		t.Fatal(err)
	}
	const rows = 1000
	data := iocal.Schema + ".data_0"
	if err := conn.Load(ctx, data, true, blockRows(rows, blockSize)); err != nil {
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

	// The write test's tables go, and only they: "wa1" does not start
	// with "w_" (a LIKE pattern's "_" matches any character).
	for _, w := range []string{"w_0", "w_1", "wa1"} {
		for _, create := range []bool{true, false} {
			if err := conn.Load(ctx, iocal.Schema+"."+w, create, blockRows(2, blockSize)); err != nil {
				t.Fatalf("load %s (create %v): %v", w, create, err)
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
	if err := conn.DropSchema(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.Meta(ctx); err == nil {
		t.Error("the schema was dropped, yet its meta reads back")
	}
}
