package report

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/report/assets"
)

// MaxBytes bounds each report file (report.html, report.md): a results.json
// under its read bound can still ask for a report of hundreds of
// megabytes, and gigabytes of memory to make it, from many steps each
// charting a long timeseries. No browser shows such a report; the data
// stays in results.json and timeseries.csv. A variable for the tests.
var MaxBytes = 64 << 20

// The least a step's section and a chart's point cost in report.html,
// from which the report's size is estimated before and while it is laid
// out: a section is a heading and a table (2.7 kB and more for the
// fixtures' steps), a point a number and a comma.
const (
	minStepBytes  = 256
	minPointBytes = 2
)

// errTooBig ends a rendering that passes MaxBytes.
var errTooBig = errors.New("the report passes its bound")

// tooBig is the one sentence refusing the report of dir.
func tooBig(dir string, steps, points int) error {
	return fault.Input("read its results.json and timeseries.csv with other tools, or split the run into smaller ones",
		"the report of %s would be more than %s (%d steps, %d chart points), more than a report may be", dir, mib(MaxBytes), steps, points)
}

func mib(n int) string { return fmt.Sprintf("%d MiB", n>>20) }

// points is how many numbers a chart carries.
func points(c assets.Chart) int {
	n := len(c.X) + len(c.Categories) + len(c.Segments) + len(c.Rows)
	for _, s := range c.Series {
		n += len(s.X) + len(s.Y)
	}
	return n
}

// estimate is the least report.html the layout so far makes.
func (r *Report) estimate() int {
	return len(r.Sections)*minStepBytes + r.points*minPointBytes
}

// boundedBuffer is a buffer that refuses to grow past max bytes.
type boundedBuffer struct {
	bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, errTooBig
	}
	return b.Buffer.Write(p)
}
