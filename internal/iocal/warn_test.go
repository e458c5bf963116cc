package iocal

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
)

// A point says when its figures are rough: few operations, or operations
// that ran well past its window (MariaDB's quick seqwrite at 16 jobs: one
// 64 MiB chunk a job, 50 s in a 3 s point).
func TestPointWarnings(t *testing.T) {
	cases := []struct {
		name            string
		samples         int64
		elapsed, window float64
		want            []string // a word of each warning, in order
	}{
		{"many operations in time", 5000, 3.1, 3, nil},
		{"the boundary of few is not few", fewSamples, 3, 3, nil},
		{"sixteen chunks", 16, 3.4, 3, []string{"from 16 operations"}},
		{"one chunk a job for 50 s", 16, 50.2, 3, []string{"from 16 operations", "took 50.2 s"}},
		{"a long last call", 900, 5, 3, []string{"outlasted its 3 s window"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := pointWarnings(TestSeqWrite, 16, c.samples, c.elapsed, c.window, 1)
			if len(got) != len(c.want) {
				t.Fatalf("warnings %q, want %d", got, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) || !strings.HasPrefix(got[i], "seqwrite at 16 jobs ") {
					t.Errorf("warning %q lacks %q", got[i], w)
				}
			}
		})
	}
}

// The write test's chunks: 4 MiB until a point has measured the rate,
// then eight calls a job a point at that rate, within 1 to 64 MiB and the
// data's share of a job.
func TestSeqWriteChunk(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name     string
		size     int64
		last     float64 // MB/s of the last point, 0: none
		jobs     int
		point    time.Duration
		wantSize int64
	}{
		{"first point", 1 << 30, 0, 1, 3 * time.Second, 4 * mib},
		{"first point of little data", 8 * mib, 0, 4, 3 * time.Second, 2 * mib},
		{"fast storage, long points", 1 << 30, 800, 1, 10 * time.Second, 64 * mib},
		{"16 jobs sharing 100 MB/s for 3 s", 1 << 30, 100, 16, 3 * time.Second, 2343750},
		{"slow storage", 1 << 30, 20, 16, 3 * time.Second, mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &runner{cfg: Config{SizeBytes: c.size, Point: c.point}, lastMBPS: map[string]float64{}}
			if c.last > 0 {
				r.lastMBPS[TestSeqWrite] = c.last
			}
			if got := r.seqWriteChunk(c.jobs); got != c.wantSize {
				t.Errorf("chunk %d bytes, want %d", got, c.wantSize)
			}
		})
	}
}

// writes records the chunks the write test asks a server for.
type writes struct {
	Conn   // only DropTable and WriteRows are called
	chunks []Chunk
}

func (w *writes) DropTable(context.Context, string) error { return nil }
func (w *writes) WriteRows(_ context.Context, _ string, ch Chunk) error {
	w.chunks = append(w.chunks, ch)
	return nil
}

// A job's table is created by its first chunk of a point, appended to, and
// emptied before the chunk that would take it past 256 MiB, or past the
// jobs' share of the data: never a TRUNCATE a chunk, which InnoDB syncs.
// The chunks' rows are numbered on across the warmup and the point, so
// that no key is written twice into a table (MariaDB's has a primary key).
func TestSeqWriteEmptiesTheTableSeldom(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name         string
		size         int64
		jobs, calls  int
		wantEmptyAt  []int // the calls that empty the table first
		wantChunkMiB int64
	}{
		{"1 GiB, one job: 64 chunks of 4 MiB a table", 1 << 30, 1, 130, []int{64, 128}, 4},
		{"8 MiB, 4 jobs: a chunk is the job's share", 8 * mib, 4, 3, []int{1, 2}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &runner{cfg: Config{SizeBytes: c.size, Point: 3 * time.Second}, lastMBPS: map[string]float64{}, data: &data{blockSize: 8192}}
			w := &writes{}
			op := r.seqWriteOp(c.jobs)
			j := &job{id: 0, conn: w, lat: hist.New()}
			for i := range c.calls {
				d, err := op(context.Background(), j)
				if err != nil {
					t.Fatal(err)
				}
				j.record(d, time.Millisecond)
				if i == 0 {
					j.ops = 0 // a warmup's end: the point's ops count anew
				}
			}
			var empties []int
			for i, ch := range w.chunks {
				if ch.Empty {
					empties = append(empties, i)
				}
				if ch.Create != (i == 0) || ch.N*8192 != c.wantChunkMiB*mib || ch.First != int64(i)*ch.N || ch.Width != 8192-256 {
					t.Fatalf("chunk %d: %+v; want %d MiB from row %d, created first", i, ch, c.wantChunkMiB, int64(i)*ch.N)
				}
			}
			if !slices.Equal(empties, c.wantEmptyAt) {
				t.Errorf("the table was emptied before chunks %v, want %v", empties, c.wantEmptyAt)
			}
		})
	}
}
