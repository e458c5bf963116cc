package iocal

import (
	"context"
	"math/rand/v2"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Data is calibration data loaded for a workload that reads it at its
// own pace (the replay): the same tables, loads and server-side random
// reads as the random test's.
type Data struct {
	d  *data
	dl Dialect
}

// LoadData loads size bytes of calibration data with loaders in parallel,
// replacing any there; Drop removes it.
func LoadData(ctx context.Context, e engine.Engine, size int64, loaders int, seed uint64) (*Data, error) {
	dl, err := Dialects.For(e)
	if err != nil {
		return nil, err
	}
	conn, err := dl.Connect(ctx)
	if err != nil {
		return nil, err
	}
	blockSize, _, err := conn.Server(ctx)
	conn.Close()
	if err != nil {
		return nil, err
	}
	d, _, err := load(ctx, dl.Connect, size, blockSize, max(loaders, 1), seed)
	if err != nil {
		return nil, err
	}
	return &Data{d: d, dl: dl}, nil
}

// Connect opens a session that reads the data.
func (d *Data) Connect(ctx context.Context) (Conn, error) { return d.dl.Connect(ctx) }

// Bytes is the data's size in blocks.
func (d *Data) Bytes() int64 { return d.d.total * int64(d.d.blockSize) }

// ReadRandom has the server read n uniformly random blocks of one table
// (drawn in proportion to its blocks) in one call; it returns the rows
// found, one a block.
func (d *Data) ReadRandom(ctx context.Context, c Conn, rng *rand.Rand, blocks []int64) (int64, error) {
	k, _ := d.d.locate(rng.Int64N(d.d.total))
	for i := range blocks {
		blocks[i] = rng.Int64N(d.d.blocks[k])
	}
	return c.ReadRandom(ctx, dataTable(k), blocks)
}

// Drop removes the data.
func (d *Data) Drop(ctx context.Context) error {
	c, err := d.dl.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.DropSchema(ctx)
}
