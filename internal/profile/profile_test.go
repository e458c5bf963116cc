package profile

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// A profile calibra profile wrote during an oltp run reads back, and
// encodes to the same rates.
func TestParseCaptured(t *testing.T) {
	data, err := os.ReadFile("testdata/oltp-pg15.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data, "oltp-pg15.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Rates.CommitsPS != 910.8 || p.Rates.WALBytesPS != 5602354 || p.Shape.PageBytes != 8192 {
		t.Errorf("rates %+v, shape %+v", p.Rates, p.Shape)
	}
	again, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(again, "again")
	if err != nil || q.Rates != p.Rates || q.Shape.DataBytes != p.Shape.DataBytes {
		t.Errorf("encoded profile reads back as %+v (%v)", q, err)
	}
}

func TestParseRefuses(t *testing.T) {
	valid, err := os.ReadFile("testdata/oltp-pg15.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"another file", "kind: calibra-profile", "kind: study", "not a calibra profile"},
		{"a later version", "version: 1", "version: 9", "version 9"},
		{"a negative rate", "commits_ps: 910.8", "commits_ps: -1", "rates.commits_ps"},
		{"an unknown field", "kind: calibra-profile", "kind: calibra-profile\nsql: SELECT 1", "not a calibra profile"},
		{"nothing to replay", "page_reads_ps: 151.3", "page_reads_ps: 0", "nothing to replay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(string(valid), tc.from, tc.to, 1)
			if tc.name == "nothing to replay" {
				data = strings.Replace(data, "commits_ps: 910.8", "commits_ps: 0", 1)
			}
			_, err := Parse([]byte(data), "p.yaml")
			var in *fault.InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an input error saying %q", err, tc.want)
			}
		})
	}
}

// Between is the one definition of a window's rates: per second over the
// window, the hit share of all page requests, WAL bytes per commit.
func TestBetween(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	a := Counters{Commits: n(100), PageReads: n(10), PageHits: n(90), WALBytes: n(0), WALSyncs: n(0), PageWrites: n(0)}
	b := Counters{Commits: n(300), PageReads: n(30), PageHits: n(270), WALBytes: n(400000), WALSyncs: n(50), PageWrites: n(8)}
	w := Between(a, b, 2)
	if w.Rates != (Rates{PageReadsPS: 10, PageWritesPS: 4, CommitsPS: 100, WALBytesPS: 200000, WALSyncsPS: 25}) {
		t.Errorf("rates %+v", w.Rates)
	}
	if *w.HitPct != 90 || *w.WALPerCommit != 2000 || w.SeqPct != nil {
		t.Errorf("hit %v, WAL a commit %v, sequential %v", *w.HitPct, *w.WALPerCommit, w.SeqPct)
	}
}

// The active sessions are counted at random gaps around SampleEvery, so
// that a load paced at a period dividing it is not seen at one phase.
func TestSampleGapsVaryAroundTheirMean(t *testing.T) {
	lo, hi, sum := time.Hour, time.Duration(0), time.Duration(0)
	const n = 1000
	for range n {
		g := SampleGap()
		lo, hi, sum = min(lo, g), max(hi, g), sum+g
	}
	if lo < SampleEvery/2 || hi >= SampleEvery*3/2 || hi-lo < SampleEvery/2 {
		t.Errorf("gaps from %v to %v: want them spread over [%v, %v)", lo, hi, SampleEvery/2, SampleEvery*3/2)
	}
	if mean := sum / n; mean < SampleEvery*9/10 || mean > SampleEvery*11/10 {
		t.Errorf("mean gap %v, want about %v", mean, SampleEvery)
	}
}
