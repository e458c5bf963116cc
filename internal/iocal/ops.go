package iocal

import (
	"context"
	"sync"
	"time"
)

// commitTable is the commit test's table and writePool the random bytes
// the write test's rows are cut from: their names start with writePrefix,
// so that a --keep run drops them with the write test's tables.
var (
	commitTable = Schema + "." + writePrefix + "commit"
	writePool   = Schema + "." + writePrefix + "pool"
)

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
	return func(ctx context.Context, j *job) (done, error) {
		k, _ := r.data.locate(j.rng.Int64N(r.data.total))
		if cap(j.blocks) < per {
			j.blocks = make([]int64, per)
		}
		blocks := j.blocks[:per]
		for i := range blocks {
			blocks[i] = j.rng.Int64N(r.data.blocks[k])
		}
		rows, err := j.conn.ReadRandom(ctx, dataTable(k), blocks)
		return done{bytes: rows * bs, units: rows}, err
	}
}

// clientReadOp reads one uniformly random block a query.
func (r *runner) clientReadOp() op {
	bs := int64(r.data.blockSize)
	return func(ctx context.Context, j *job) (done, error) {
		k, b := r.data.locate(j.rng.Int64N(r.data.total))
		err := j.conn.ReadBlock(ctx, dataTable(k), b)
		return done{bytes: bs, units: 1}, err
	}
}

// seqReadOp hands out 4 MiB chunks of the data in order across the jobs.
func (r *runner) seqReadOp() func(int) op {
	bs := int64(r.data.blockSize)
	chunk := int64(4<<20) / bs
	var mu sync.Mutex
	table, at := 0, int64(0)
	return func(int) op {
		return func(ctx context.Context, j *job) (done, error) {
			mu.Lock()
			k, from := table, at
			to := min(from+chunk, r.data.blocks[k])
			if at = to; at >= r.data.blocks[k] {
				table, at = (table+1)%len(r.data.blocks), 0
			}
			mu.Unlock()
			err := j.conn.ReadBlocks(ctx, dataTable(k), from, to)
			return done{bytes: (to - from) * bs}, err
		}
	}
}

// Chunks of the write test: between 1 and 64 MiB, 4 MiB until a point
// has measured the rate, then as many a job in a point as
// seqWriteCallsPerJob at that rate.
const (
	seqWriteMinChunk    = 1 << 20
	seqWriteMaxChunk    = 64 << 20
	seqWriteFirstChunk  = 4 << 20
	seqWriteCallsPerJob = 8
	// seqWriteKeep is the most a job's table holds before it is emptied.
	seqWriteKeep = 256 << 20
)

// seqWriteChunk is the bytes each job loads a call at a job count: the
// jobs' tables together stay within the data's size, and at the last
// point's rate shared by these jobs (as if it were saturated, so the
// chunks err small), each job makes seqWriteCallsPerJob calls a point,
// so that a point's latency comes from many calls, not one a job.
func (r *runner) seqWriteChunk(jobs int) int64 {
	chunk := int64(seqWriteFirstChunk)
	if rate := r.lastMBPS[TestSeqWrite]; rate > 0 {
		chunk = int64(rate * 1e6 / float64(jobs) * r.cfg.Point.Seconds() / seqWriteCallsPerJob)
	}
	return max(min(chunk, r.cfg.SizeBytes/int64(jobs), seqWriteMaxChunk), seqWriteMinChunk)
}

// seqWriteOp has each job's server append chunks to the job's own table,
// emptied when the next chunk would take it past seqWriteKeep (or the
// jobs' share of the data's size): emptying it is DDL, whose syncs would
// otherwise come with every chunk (InnoDB's TRUNCATE took about 100 ms a
// call on a busy device, a 4 MiB chunk's time three times over).
func (r *runner) seqWriteOp(jobs int) op {
	bs := int64(r.data.blockSize)
	rows := max(r.seqWriteChunk(jobs)/bs, 1)
	keep := max(rows, min(seqWriteKeep, r.cfg.SizeBytes/int64(jobs))/bs)
	// Each job's table, once created: the rows it holds, and the rows
	// written into it since, which number the next chunk's (the warmup's
	// and the point's ops alike: a key is never written twice).
	type table struct{ held, written int64 }
	tables := map[int]*table{}
	var mu sync.Mutex
	return func(ctx context.Context, j *job) (done, error) {
		mu.Lock()
		t, created := tables[j.id]
		if !created {
			t = &table{}
			tables[j.id] = t
		}
		empty := created && t.held+rows > keep
		if empty {
			t.held = 0
		}
		ch := Chunk{Table: writeTable(j.id), Create: !created, Empty: empty, First: t.written, N: rows, Width: rowBytes(int(bs))}
		t.held, t.written = t.held+rows, t.written+rows
		mu.Unlock()
		if !created {
			if err := j.conn.DropTable(ctx, writeTable(j.id)); err != nil {
				return done{}, err
			}
		}
		return done{bytes: rows * bs}, j.conn.WriteRows(ctx, writePool, ch)
	}
}

// One call of the commit test loops up to commitsPerCall commits in the
// server, for at most commitCallTime, so that a point outlasts its window
// by at most one call.
const (
	commitsPerCall = 4096
	commitCallTime = 100 * time.Millisecond
)

// commitOp has the server loop tiny synchronous commits, each timed by
// the server, so that neither the client nor the round trip is in a
// commit's latency.
func commitOp(ctx context.Context, j *job) (done, error) {
	lats, err := j.conn.Commits(ctx, commitTable, j.id, j.units, commitsPerCall, commitCallTime)
	return done{units: int64(len(lats)), lats: lats}, err
}
