package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/calibra-bench/calibra/internal/safefs"
)

// TimeseriesFile is the run directory's per-second samples.
const TimeseriesFile = "timeseries.csv"

// Timeseries is timeseries.csv: one row per second, the sample's end time
// first, then one column per metric (empty where it was not measured).
// This is the one reader of that file; the report and compare use it.
type Timeseries struct {
	Time    []time.Time
	Columns []string // without "time", in file order
	index   map[string]int
	cells   [][]string // [row][column]
}

// ReadTimeseries parses timeseries.csv.
func ReadTimeseries(r io.Reader) (*Timeseries, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("timeseries: header: %w", err)
	}
	if len(head) == 0 || head[0] != "time" {
		return nil, errors.New("timeseries: the first column is not time")
	}
	ts := &Timeseries{Columns: head[1:], index: map[string]int{}}
	for i, c := range ts.Columns {
		ts.index[c] = i
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return ts, nil
		}
		if line-1 > maxRows {
			return nil, fmt.Errorf("timeseries: %w (more than %d)", errTooManyRows, maxRows)
		}
		if err != nil {
			return nil, fmt.Errorf("timeseries: %w", err)
		}
		at, err := time.Parse(time.RFC3339Nano, rec[0])
		if err != nil {
			// Not the cell itself: an error never quotes a file's content.
			return nil, fmt.Errorf("timeseries: line %d: the time is not RFC 3339", line)
		}
		ts.Time = append(ts.Time, at)
		ts.cells = append(ts.cells, rec[1:])
	}
}

// LoadTimeseries reads a run directory's timeseries.csv; nil, nil when the
// run has none (a run stopped before its observers wrote it).
func LoadTimeseries(dir string) (*Timeseries, error) {
	f, err := safefs.OpenInput(filepath.Join(dir, TimeseriesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTimeseriesFile(f, filepath.Join(dir, TimeseriesFile))
}

// ReadTimeseriesFile parses a timeseries read from path, bounded by
// MaxTimeseriesBytes and MaxTimeseriesRows; its errors name path.
func ReadTimeseriesFile(r io.Reader, path string) (*Timeseries, error) {
	lr := &io.LimitedReader{R: r, N: MaxTimeseriesBytes + 1}
	ts, err := ReadTimeseries(lr)
	if lr.N <= 0 {
		return nil, tooLarge(path, MaxTimeseriesBytes)
	}
	if err != nil {
		return nil, readErr(path, err)
	}
	return ts, nil
}

// Has reports whether the series has the column.
func (t *Timeseries) Has(col string) bool {
	_, ok := t.index[col]
	return ok
}

// Float returns a column as numbers, NaN where a cell is empty or not a
// number; nil when the column is absent.
func (t *Timeseries) Float(col string) []float64 {
	i, ok := t.index[col]
	if !ok {
		return nil
	}
	out := make([]float64, len(t.cells))
	for r, row := range t.cells {
		out[r] = math.NaN()
		if i < len(row) && row[i] != "" {
			if v, err := strconv.ParseFloat(row[i], 64); err == nil {
				out[r] = v
			}
		}
	}
	return out
}

// Text returns a column's cells; nil when the column is absent.
func (t *Timeseries) Text(col string) []string {
	i, ok := t.index[col]
	if !ok {
		return nil
	}
	out := make([]string, len(t.cells))
	for r, row := range t.cells {
		if i < len(row) {
			out[r] = row[i]
		}
	}
	return out
}
