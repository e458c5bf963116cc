// Package hist records latencies in HDR histograms (three significant
// digits) and summarises them in the units results.json uses.
package hist

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/calibra-bench/calibra/internal/results"
)

// Range of a recorded latency, in microseconds: 1 µs to 10 minutes. A longer
// latency is recorded as the maximum (and still counts in exact means).
const (
	minMicros = 1
	maxMicros = int64(10 * time.Minute / time.Microsecond)
	sigFigs   = 3
)

// Histogram is a latency histogram in microseconds.
type Histogram struct{ h *hdrhistogram.Histogram }

// New returns an empty histogram.
func New() *Histogram { return &Histogram{hdrhistogram.New(minMicros, maxMicros, sigFigs)} }

// Record adds one latency.
func (h *Histogram) Record(d time.Duration) { _ = h.h.RecordValue(micros(d)) }

// micros is the value a histogram records for d.
func micros(d time.Duration) int64 {
	return min(max(d.Microseconds(), minMicros), maxMicros)
}

// Buckets counts the values a Histogram would record at or below each of
// fixed bounds, exactly (an exposition's histogram buckets): a scrape
// then reads counters, where walking an HdrHistogram allocated some
// 0.7 MB a transaction type.
type Buckets struct {
	bounds []int64 // µs, ascending
	counts []uint64
}

// NewBuckets returns empty buckets at bounds (ascending).
func NewBuckets(bounds []time.Duration) *Buckets {
	b := &Buckets{counts: make([]uint64, len(bounds))}
	for _, d := range bounds {
		b.bounds = append(b.bounds, micros(d))
	}
	return b
}

// Record counts d under the first bound at or above it; above every
// bound it counts only in the total the caller keeps.
func (b *Buckets) Record(d time.Duration) {
	us := micros(d)
	if i, _ := slices.BinarySearch(b.bounds, us); i < len(b.counts) {
		b.counts[i]++
	}
}

// Cumulative returns how many values are at or below each bound.
func (b *Buckets) Cumulative() []uint64 {
	out := make([]uint64, len(b.counts))
	var n uint64
	for i, c := range b.counts {
		n += c
		out[i] = n
	}
	return out
}

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) { h.h.Merge(o.h) }

// Reset empties the histogram.
func (h *Histogram) Reset() { h.h.Reset() }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// QuantileMs returns the q-th percentile (0-100) in milliseconds.
func (h *Histogram) QuantileMs(q float64) float64 {
	return float64(h.h.ValueAtQuantile(q)) / 1000
}

// Summary gives the percentiles of results.Latency; mean is passed in
// because callers keep it exactly.
func (h *Histogram) Summary(meanMs float64) results.Latency {
	return results.Latency{
		Mean: round3(meanMs),
		P50:  h.QuantileMs(50),
		P90:  h.QuantileMs(90),
		P95:  h.QuantileMs(95),
		P99:  h.QuantileMs(99),
		Max:  float64(h.h.Max()) / 1000,
	}
}

func round3(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

// Log is an HdrHistogram interval log (format 1.3): one histogram per tick,
// so any window can be recomputed afterwards with the standard tools.
type Log struct {
	buf bytes.Buffer
	w   *hdrhistogram.HistogramLogWriter
}

// NewLog starts a log whose interval times count from start.
func NewLog(start time.Time, comment string) *Log {
	l := &Log{}
	l.w = hdrhistogram.NewHistogramLogWriter(&l.buf)
	ms := start.UnixMilli()
	l.w.SetBaseTime(ms)
	_ = l.w.OutputComment(comment)
	_ = l.w.OutputComment("values in microseconds")
	_ = l.w.OutputLogFormatVersion()
	_ = l.w.OutputStartTime(ms)
	_ = l.w.OutputLegend()
	return l
}

// Add appends h as the interval [from, to) under tag.
func (l *Log) Add(h *Histogram, from, to time.Time, tag string) error {
	h.h.SetStartTimeMs(from.UnixMilli())
	h.h.SetEndTimeMs(to.UnixMilli())
	h.h.SetTag(tag)
	return l.w.OutputIntervalHistogram(h.h)
}

// Bytes is the log so far.
func (l *Log) Bytes() []byte { return l.buf.Bytes() }

// Interval is one histogram of an interval log, with its span and tag.
type Interval struct {
	Start, End time.Time
	Tag        string
	H          *Histogram
}

// ReadLog parses an interval log that Log wrote (or any HdrHistogram
// interval log with absolute or start-relative times).
//
// The log reader skips a line it cannot parse; ReadLog refuses it instead,
// naming the line, so that a damaged log is not read as a shorter one.
func ReadLog(data []byte) ([]Interval, error) {
	if err := checkLog(data); err != nil {
		return nil, err
	}
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(data))
	var out []Interval
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, err
		}
		if h == nil {
			return out, nil
		}
		out = append(out, Interval{Start: time.UnixMilli(h.StartTimeMs()).UTC(), End: time.UnixMilli(h.EndTimeMs()).UTC(),
			Tag: h.Tag(), H: &Histogram{h}})
	}
}

// logLine is a line of an interval log: a comment, the legend, or an
// interval (an optional tag, start, length, max and the histogram).
var logLine = regexp.MustCompile(`^(#.*|"StartTimestamp".*|(Tag=[^,]+,)?[0-9.]+,[0-9.]+,[0-9.]+,HIST[A-Za-z0-9+/=]+)$`)

// checkLog refuses a log holding a line of none of the kinds of logLine.
func checkLog(data []byte) error {
	for i, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSuffix(line, "\r"); line != "" && !logLine.MatchString(line) {
			// Not the line itself: an error never quotes a file's content.
			return fmt.Errorf("line %d is not a histogram log line", i+1)
		}
	}
	return nil
}
