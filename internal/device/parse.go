package device

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Report is what calibra takes from one fio run's JSON: every job summed.
type Report struct {
	Version     string
	Read, Write Direction
	Errors      int64 // counted I/O errors plus one per job that ended on one
	ErrNo       int   // the first error a job ended on, 0 if none
}

// Direction is one direction (read or write) of a run.
type Direction struct {
	IOs       int64
	IOPS      float64
	BytesPerS float64
	Clat      Hist
}

// fio's JSON, only the keys calibra reads (stat.c, fio 3.x). Unknown keys
// of newer versions are ignored.
type fioOutput struct {
	Version string   `json:"fio version"`
	Jobs    []fioJob `json:"jobs"`
}

type fioJob struct {
	Error    int    `json:"error"`
	TotalErr int64  `json:"total_err"` // only with continue_on_error
	Read     fioDir `json:"read"`
	Write    fioDir `json:"write"`
}

type fioDir struct {
	TotalIOs int64   `json:"total_ios"`
	IOPS     float64 `json:"iops"`
	BwBytes  float64 `json:"bw_bytes"`
	Clat     *fioLat `json:"clat_ns"`
}

type fioLat struct {
	Max        float64            `json:"max"`
	Mean       float64            `json:"mean"`
	N          float64            `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	Bins       map[string]float64 `json:"bins"` // json+ only
}

// Parse reads fio's JSON output. fio writes warnings and error lines to the
// same file before the JSON (fio issues #731, #1685), so decoding starts at
// the first line that opens an object; with --status-interval the file holds
// several reports, and the last complete one is the final one.
func Parse(data []byte) (*Report, error) {
	start := jsonStart(data)
	if start < 0 {
		return nil, errors.New("no JSON report in fio's output")
	}
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	var out *fioOutput
	for {
		var o fioOutput
		err := dec.Decode(&o)
		if err != nil {
			if out == nil {
				return nil, fmt.Errorf("read fio's JSON: %w", err)
			}
			break // text after the report, or the end
		}
		out = &o
	}
	if len(out.Jobs) == 0 {
		return nil, errors.New("fio's JSON holds no jobs")
	}
	r := &Report{Version: out.Version}
	for _, j := range out.Jobs {
		r.Errors += j.TotalErr
		if j.Error != 0 {
			r.Errors++
			if r.ErrNo == 0 {
				r.ErrNo = j.Error
			}
		}
		if err := r.Read.add(j.Read); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		if err := r.Write.add(j.Write); err != nil {
			return nil, fmt.Errorf("write: %w", err)
		}
	}
	return r, nil
}

func jsonStart(data []byte) int {
	for off := 0; off < len(data); {
		line := data[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if t := bytes.TrimLeft(line, " \t\r"); len(t) > 0 && t[0] == '{' {
			return off + len(line) - len(t)
		}
		off += len(line) + 1
	}
	return -1
}

// add sums one job's direction in: with group_reporting fio already merged
// the workers into one job; without it, calibra merges them the same way.
func (d *Direction) add(f fioDir) error {
	if f.TotalIOs == 0 {
		return nil
	}
	if f.Clat == nil {
		return errors.New("fio's JSON has no clat_ns (fio older than 3.0?)")
	}
	h, err := f.Clat.hist()
	if err != nil {
		return err
	}
	d.IOs += f.TotalIOs
	d.IOPS += f.IOPS
	d.BytesPerS += f.BwBytes
	d.Clat.Add(h)
	return nil
}

// hist turns fio's latency object into a histogram: its json+ bins, or
// when there are none (plain json output) its percentile list read as bins,
// which reproduces fio's own percentiles for one direction and one run.
func (l *fioLat) hist() (Hist, error) {
	h := Hist{Bins: map[float64]float64{}, N: l.N, Sum: l.Mean * l.N, Max: l.Max}
	if len(l.Bins) > 0 {
		for k, n := range l.Bins {
			v, err := strconv.ParseFloat(k, 64)
			if err != nil {
				return Hist{}, fmt.Errorf("latency bin %q is not a number", k)
			}
			h.Bins[v] += n
		}
		return h, nil
	}
	type pv struct{ p, v float64 }
	var ps []pv
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return Hist{}, fmt.Errorf("latency percentile %q is not a number", k)
		}
		ps = append(ps, pv{p, v})
	}
	slices.SortFunc(ps, func(a, b pv) int { return cmp.Compare(a.p, b.p) })
	prev := 0.0
	for _, x := range ps {
		h.Bins[x.v] += (x.p - prev) / 100 * l.N
		prev = x.p
	}
	h.Bins[l.Max] += (100 - prev) / 100 * l.N
	return h, nil
}

// Hist is a latency histogram in nanoseconds: fio's bucket values and the
// I/Os in each, with the count, sum and maximum for the exact mean and max.
type Hist struct {
	Bins map[float64]float64
	N    float64
	Sum  float64
	Max  float64
}

// Add merges o into h. Merging histograms, not averaging percentiles, is
// what keeps the percentiles of a mixed point or of repeats right.
func (h *Hist) Add(o Hist) {
	if h.Bins == nil {
		h.Bins = map[float64]float64{}
	}
	for v, n := range o.Bins {
		h.Bins[v] += n
	}
	h.N += o.N
	h.Sum += o.Sum
	h.Max = math.Max(h.Max, o.Max)
}

// Mean is the mean latency in nanoseconds.
func (h Hist) Mean() float64 {
	if h.N == 0 {
		return 0
	}
	return h.Sum / h.N
}

// Percentiles returns the value of each percentile p (0-100) as fio computes
// it (stat.c calc_clat_percentiles): the first bucket whose cumulative count
// reaches p% of all I/Os.
func (h Hist) Percentiles(ps ...float64) []float64 {
	values := make([]float64, 0, len(h.Bins))
	total := 0.0
	for v, n := range h.Bins {
		values = append(values, v)
		total += n
	}
	slices.Sort(values)
	out := make([]float64, len(ps))
	for i, p := range ps {
		want, cum := p/100*total, 0.0
		for _, v := range values {
			cum += h.Bins[v]
			out[i] = v
			// The tolerance absorbs rounding in bins read from percentiles.
			if cum >= want*(1-1e-12) {
				break
			}
		}
	}
	return out
}
