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

// rows generates the rows of one table as text, tab-separated fields
// and a line each (COPY's text format, LOAD DATA's default): an id and a
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

// load creates the calibration data: loaders tables loaded in parallel.
// It returns the data and the seconds it took.
func load(ctx context.Context, connect func(context.Context) (Conn, error), size int64, blockSize, loaders int, seed uint64) (*data, float64, error) {
	started := time.Now()
	admin, err := connect(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer admin.Close()
	if err := admin.ResetSchema(ctx); err != nil {
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
		defer conn.Close()
		return conn.Load(ctx, dataTable(k), newRows(first, n, rowBytes(blockSize), seed+uint64(k)))
	})
	if err != nil {
		return nil, 0, err
	}
	if err := admin.Checkpoint(ctx); err != nil {
		return nil, 0, err
	}
	took := time.Since(started).Seconds()
	if err := admin.SaveMeta(ctx, size, loaders); err != nil {
		return nil, 0, err
	}
	d, err := describe(ctx, admin, blockSize, loaders)
	return d, took, err
}

// existing returns the calibration data a --keep run left, if its size
// matches; nil otherwise.
func existing(ctx context.Context, conn Conn, size int64, blockSize int) (*data, error) {
	gotSize, tables, err := conn.Meta(ctx)
	if err != nil || gotSize != size {
		return nil, nil //nolint:nilerr // no usable data: load anew
	}
	return describe(ctx, conn, blockSize, tables)
}

func describe(ctx context.Context, conn Conn, blockSize, tables int) (*data, error) {
	d := &data{blockSize: blockSize}
	for k := range tables {
		n, err := conn.Blocks(ctx, dataTable(k), blockSize)
		if err != nil {
			return nil, err
		}
		d.blocks = append(d.blocks, n)
		d.total += n
	}
	return d, nil
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
func writeTable(j int) string { return fmt.Sprintf("%s.%s%d", Schema, writePrefix, j) }

// writePrefix starts the name of each write test's table.
const writePrefix = "w_"

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
