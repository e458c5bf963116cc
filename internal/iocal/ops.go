package iocal

import (
	"context"
	"sync"
)

// commitTable is the commit test's table: its name starts with
// writePrefix, so that a --keep run drops it with the write test's.
var commitTable = Schema + "." + writePrefix + "commit"

// opFor returns, for a job count, the unit of work of a test.
func (r *runner) opFor(test string) func(jobs int) op {
	switch test {
	case TestRandom:
		return func(int) op { return r.randomOp() }
	case TestClientRead:
		return func(int) op { return r.clientReadOp() }
	case TestSeqRead:
		return r.seqReadOp()
	case TestWAL:
		return func(int) op { return commitOp }
	default: // TestSeqWrite
		return r.seqWriteOp
	}
}

// randomOp has the server read ReadsPerCall uniformly random blocks of one
// table in one call, the table drawn in proportion to its blocks so that
// every block of the data is as likely.
func (r *runner) randomOp() op {
	bs := int64(r.data.blockSize)
	per := max(r.cfg.ReadsPerCall, 1)
	return func(ctx context.Context, j *job) (int64, int64, error) {
		k, _ := r.data.locate(j.rng.Int64N(r.data.total))
		if cap(j.blocks) < per {
			j.blocks = make([]int64, per)
		}
		blocks := j.blocks[:per]
		for i := range blocks {
			blocks[i] = j.rng.Int64N(r.data.blocks[k])
		}
		rows, err := j.conn.ReadRandom(ctx, dataTable(k), blocks)
		return rows * bs, rows, err
	}
}

// clientReadOp reads one uniformly random block a query.
func (r *runner) clientReadOp() op {
	bs := int64(r.data.blockSize)
	return func(ctx context.Context, j *job) (int64, int64, error) {
		k, b := r.data.locate(j.rng.Int64N(r.data.total))
		if err := j.conn.ReadBlock(ctx, dataTable(k), b); err != nil {
			return 0, 0, err
		}
		return bs, 1, nil
	}
}

// seqReadOp hands out 4 MiB chunks of the data in order across the jobs.
func (r *runner) seqReadOp() func(int) op {
	bs := int64(r.data.blockSize)
	chunk := int64(4<<20) / bs
	var mu sync.Mutex
	table, at := 0, int64(0)
	return func(int) op {
		return func(ctx context.Context, j *job) (int64, int64, error) {
			mu.Lock()
			k, from := table, at
			to := min(from+chunk, r.data.blocks[k])
			if at = to; at >= r.data.blocks[k] {
				table, at = (table+1)%len(r.data.blocks), 0
			}
			mu.Unlock()
			err := j.conn.ReadBlocks(ctx, dataTable(k), from, to)
			return (to - from) * bs, 0, err
		}
	}
}

// seqWriteOp has each job load chunks into its own table.
func (r *runner) seqWriteOp(jobs int) op {
	bs := int64(r.data.blockSize)
	// The jobs' tables together stay within the data's size.
	rows := max(int64(1<<20)/bs, min(r.cfg.SizeBytes/int64(jobs), 64<<20)/bs)
	created := map[int]bool{}
	var mu sync.Mutex
	return func(ctx context.Context, j *job) (int64, int64, error) {
		mu.Lock()
		create := !created[j.id]
		created[j.id] = true
		mu.Unlock()
		if create {
			if err := j.conn.DropTable(ctx, writeTable(j.id)); err != nil {
				return 0, 0, err
			}
		}
		err := j.conn.Load(ctx, writeTable(j.id), create, newRows(j.ops*rows, rows, rowBytes(int(bs)), r.cfg.Seed+uint64(j.id)))
		return rows * bs, 0, err
	}
}

// commitOp commits one tiny transaction.
func commitOp(ctx context.Context, j *job) (int64, int64, error) {
	err := j.conn.Commit(ctx, commitTable, j.id, j.ops)
	return 0, 1, err
}
