package iocal

import (
	"strings"
	"testing"
	"time"
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
