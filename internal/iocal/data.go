package iocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Schema holds the calibration data: data_0..data_{n-1}, one table per
// loader, one row per block, and w_0.. for the write test.
const Schema = "calibra_iocal"

// data is the calibration data as loaded: each table's blocks, in order.
type data struct {
	blockSize int
	blocks    []int64 // per table
	total     int64
}

// rowBytes is the filler of one row: more than half a block, so that
// exactly one row fits in each block and a block read is a row read.
func rowBytes(blockSize int) int { return blockSize - 256 }

// rows generates the text-format COPY rows of one table: an id and a
// filler of letters that differs from row to row (taken at a moving offset
// in a random pool), so that neither the storage's compression nor its
// deduplication shrinks it much.
type rows struct {
	next, end int64
	width     int
	pool      []byte
	buf       []byte
}

func newRows(first, n int64, width int, seed uint64) *rows {
	r := rand.New(rand.NewPCG(seed, 0x10ca1))
	pool := make([]byte, 4<<20)
	for i := range pool {
		pool[i] = 'a' + byte(r.IntN(26))
	}
	return &rows{next: first, end: first + n, width: width, pool: pool}
}

func (r *rows) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.buf) == 0 {
			if r.next == r.end {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			off := int(uint64(r.next)*7919) % (len(r.pool) - r.width)
			r.buf = strconv.AppendInt(r.buf[:0], r.next, 10)
			r.buf = append(r.buf, '\t')
			r.buf = append(r.buf, r.pool[off:off+r.width]...)
			r.buf = append(r.buf, '\n')
			r.next++
		}
		c := copy(p[n:], r.buf)
		r.buf = r.buf[c:]
		n += c
	}
	return n, nil
}

// copyRows loads n rows into table in one transaction that creates (or
// truncates) it first, so that COPY FREEZE can write the rows frozen and
// visible: later reads then never dirty a block to set hint bits.
func copyRows(ctx context.Context, conn *pgx.Conn, table string, create bool, first, n int64, width int, seed uint64) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	ddl := "TRUNCATE " + table
	if create {
		ddl = "CREATE TABLE " + table + " (id bigint NOT NULL, filler text NOT NULL) WITH (autovacuum_enabled = off)"
	}
	if _, err := tx.Exec(ctx, ddl); err != nil {
		return err
	}
	if create {
		// PLAIN: never compressed or moved out of line, so a row is a block.
		if _, err := tx.Exec(ctx, "ALTER TABLE "+table+" ALTER COLUMN filler SET STORAGE PLAIN"); err != nil {
			return err
		}
	}
	if _, err := conn.PgConn().CopyFrom(ctx, newRows(first, n, width, seed), "COPY "+table+" FROM STDIN WITH (FREEZE)"); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	return tx.Commit(ctx)
}

// load creates the calibration data: loaders tables loaded in parallel.
// It returns the data and the seconds it took.
func load(ctx context.Context, connect func(context.Context) (*pgx.Conn, error), size int64, blockSize, loaders int, seed uint64) (*data, float64, error) {
	started := time.Now()
	admin, err := connect(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+Schema+" CASCADE"); err != nil {
		return nil, 0, err
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+Schema); err != nil {
		return nil, 0, err
	}
	rowsTotal := max(size/int64(blockSize), int64(loaders))
	err = parallel(loaders, func(k int) error {
		first := rowsTotal * int64(k) / int64(loaders)
		n := rowsTotal*int64(k+1)/int64(loaders) - first
		conn, err := connect(ctx)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return copyRows(ctx, conn, dataTable(k), true, first, n, rowBytes(blockSize), seed+uint64(k))
	})
	if err != nil {
		return nil, 0, err
	}
	if _, err := admin.Exec(ctx, "CHECKPOINT"); err != nil {
		return nil, 0, err
	}
	took := time.Since(started).Seconds()
	if _, err := admin.Exec(ctx, fmt.Sprintf("CREATE TABLE %s.meta AS SELECT %d::bigint AS size_bytes, %d AS tables", Schema, size, loaders)); err != nil {
		return nil, 0, err
	}
	d, err := describe(ctx, admin, blockSize, loaders)
	return d, took, err
}

// existing returns the calibration data a --keep run left, if its size
// matches; nil otherwise.
func existing(ctx context.Context, conn *pgx.Conn, size int64, blockSize int) (*data, error) {
	var gotSize int64
	var tables int
	err := conn.QueryRow(ctx, "SELECT size_bytes, tables FROM "+Schema+".meta").Scan(&gotSize, &tables)
	if err != nil || gotSize != size {
		return nil, nil //nolint:nilerr // no usable data: load anew
	}
	return describe(ctx, conn, blockSize, tables)
}

func describe(ctx context.Context, conn *pgx.Conn, blockSize, tables int) (*data, error) {
	d := &data{blockSize: blockSize}
	for k := range tables {
		var bytes int64
		if err := conn.QueryRow(ctx, "SELECT pg_relation_size($1)", dataTable(k)).Scan(&bytes); err != nil {
			return nil, err
		}
		n, err := blocksWithRows(ctx, conn, dataTable(k), bytes/int64(blockSize))
		if err != nil {
			return nil, err
		}
		d.blocks = append(d.blocks, n)
		d.total += n
	}
	return d, nil
}

// blocksWithRows counts a table's blocks up to the last that holds a row:
// PostgreSQL 16+ extends a relation by many blocks at once during COPY, so
// its last blocks may be empty, and a random read there would find
// nothing. A TID range scan reads only the table's tail.
func blocksWithRows(ctx context.Context, conn *pgx.Conn, table string, size int64) (int64, error) {
	for back := int64(64); ; back *= 8 {
		from := max(size-back, 0)
		var last *string
		q := fmt.Sprintf("SELECT max(ctid)::text FROM %s WHERE ctid >= '(%d,0)'::tid", table, from)
		if err := conn.QueryRow(ctx, q).Scan(&last); err != nil {
			return 0, fmt.Errorf("find the last block of %s: %w", table, err)
		}
		if last != nil {
			var block, item int64
			if _, err := fmt.Sscanf(*last, "(%d,%d)", &block, &item); err != nil {
				return 0, fmt.Errorf("read the ctid %q of %s: %w", *last, table, err)
			}
			return block + 1, nil
		}
		if from == 0 {
			return 0, nil
		}
	}
}

// parallel runs f(0..n-1) at once and joins their errors.
func parallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func dataTable(k int) string  { return fmt.Sprintf("%s.data_%d", Schema, k) }
func writeTable(j int) string { return fmt.Sprintf("%s.w_%d", Schema, j) }

// locate maps a block number over the whole data to its table and block.
func (d *data) locate(b int64) (int, int64) {
	for k, n := range d.blocks {
		if b < n {
			return k, b
		}
		b -= n
	}
	return len(d.blocks) - 1, d.blocks[len(d.blocks)-1] - 1
}
