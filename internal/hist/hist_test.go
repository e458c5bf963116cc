package hist

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestSummaryKeepsThreeSignificantDigits(t *testing.T) {
	h := New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	s := h.Summary(500.5)
	cases := []struct {
		name      string
		got, want float64
	}{
		{"p50", s.P50, 500}, {"p90", s.P90, 900}, {"p99", s.P99, 990}, {"max", s.Max, 1000}, {"mean passed through", s.Mean, 500.5},
	}
	for _, c := range cases {
		if rel := (c.got - c.want) / c.want; rel > 0.001 || rel < -0.001 {
			t.Errorf("%s = %v ms, want %v within 0.1%%", c.name, c.got, c.want)
		}
	}
}

func TestRecordClampsOutOfRangeLatencies(t *testing.T) {
	h := New()
	h.Record(0)
	h.Record(time.Hour)
	if h.Count() != 2 {
		t.Fatalf("%d values recorded, want both kept", h.Count())
	}
	if h.QuantileMs(100) < 599000 {
		t.Fatalf("an hour was recorded as %v ms, want the 10-minute ceiling", h.QuantileMs(100))
	}
}

func TestLogRoundTripsEachTick(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := NewLog(start, "calibra test")
	for i := 1; i <= 3; i++ {
		h := New()
		for range i * 10 {
			h.Record(time.Duration(i) * time.Millisecond)
		}
		if err := l.Add(h, start.Add(time.Duration(i-1)*time.Second), start.Add(time.Duration(i)*time.Second), "measure"); err != nil {
			t.Fatal(err)
		}
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(l.Bytes()))
	for i := 1; i <= 3; i++ {
		h, err := r.NextIntervalHistogram()
		if err != nil || h == nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		if h.TotalCount() != int64(i*10) || h.Tag() != "measure" {
			t.Fatalf("tick %d: %d values tagged %q, want %d tagged measure", i, h.TotalCount(), h.Tag(), i*10)
		}
	}
}

func TestReadLogKeepsSpansAndTags(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := NewLog(start, "calibra test")
	for i, tag := range []string{"rampup", "measure"} {
		h := New()
		h.Record(time.Duration(i+1) * time.Millisecond)
		if err := l.Add(h, start.Add(time.Duration(i)*time.Second), start.Add(time.Duration(i+1)*time.Second+250*time.Millisecond), tag); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadLog(l.Bytes())
	if err != nil || len(got) != 2 {
		t.Fatalf("%d intervals, %v; want 2", len(got), err)
	}
	for i, in := range got {
		from, to := start.Add(time.Duration(i)*time.Second), start.Add(time.Duration(i+1)*time.Second+250*time.Millisecond)
		if !in.Start.Equal(from) || !in.End.Equal(to) || in.H.Count() != 1 || in.H.QuantileMs(100) != float64(i+1) {
			t.Errorf("interval %d: %s to %s, %d values, max %v ms; want %s to %s, one of %d ms", i, in.Start, in.End, in.H.Count(), in.H.QuantileMs(100), from, to, i+1)
		}
	}
	if got[0].Tag != "rampup" || got[1].Tag != "measure" {
		t.Errorf("tags %q %q", got[0].Tag, got[1].Tag)
	}
}

func TestBucketsCountWhatAHistogramRecords(t *testing.T) {
	bounds := []time.Duration{time.Millisecond, 10 * time.Millisecond, time.Second}
	tests := []struct {
		name string
		lats []time.Duration
		want []uint64
	}{
		{"empty", nil, []uint64{0, 0, 0}},
		{"on a bound", []time.Duration{time.Millisecond}, []uint64{1, 1, 1}},
		{"below a microsecond, recorded as one", []time.Duration{0, 300 * time.Nanosecond}, []uint64{2, 2, 2}},
		{"within a microsecond above a bound", []time.Duration{time.Millisecond + 999*time.Nanosecond}, []uint64{1, 1, 1}},
		{"spread", []time.Duration{500 * time.Microsecond, 1001 * time.Microsecond, 9 * time.Millisecond, 2 * time.Second}, []uint64{1, 3, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBuckets(bounds)
			for _, d := range tc.lats {
				b.Record(d)
			}
			if got := b.Cumulative(); !slices.Equal(got, tc.want) {
				t.Errorf("Cumulative = %v, want %v", got, tc.want)
			}
		})
	}
}
