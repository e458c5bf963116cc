// The run's second-by-second timeline: its ticks, their collector and
// timeseries.csv.

package oltp

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// Tick is one second of the run as the client saw it (live figures, for
// the timeline; the window's metrics come from its edges).
type Tick struct {
	At         time.Time
	ElapsedS   float64
	Phase      string
	TPM        float64 // completed transactions per minute
	NOPMClient float64 // committed New-Orders per minute
	ARTMs      float64
	P90Ms      float64
	Errors     int64
	Users      int
}

// collector gathers the users' ticks every second for the timeline and the
// live status line.
type collector struct {
	recs  []*recorder
	users int
	began time.Time
	prog  *progress.Printer
	out   *results.OLTP
	tick  tickStats
	ticks []Tick
	log   *hist.Log
	last  time.Time
	spare *hist.Histogram // an empty tick histogram to swap into a recorder
	watch Watcher
	sec   Second

	onTick func(Tick) // RunConfig.OnTick
}

func (c *collector) record() *Record { return &Record{Ticks: c.ticks, Histograms: c.log.Bytes()} }

func (c *collector) collect(now time.Time, phase string) {
	c.tick = tickStats{lat: c.tick.lat, txs: c.tick.txs[:0]}
	c.tick.lat.Reset()
	if c.spare == nil {
		c.spare = hist.New()
	}
	for _, r := range c.recs {
		c.spare = r.takeTick(&c.tick, c.spare)
	}
	prev := c.last
	if prev.IsZero() {
		prev = c.began
	}
	c.last = now
	span := now.Sub(prev)
	var n, errs int64
	for _, s := range c.tick.types {
		n += s.count
		errs += s.errors
	}
	tk := Tick{At: now, ElapsedS: now.Sub(c.began).Seconds(), Phase: phase, Errors: errs, Users: c.users,
		TPM: perMinute(float64(n), span), NOPMClient: perMinute(float64(c.tick.types[NewOrder].count-c.tick.types[NewOrder].rollbacks), span)}
	if n > 0 {
		tk.ARTMs = art(c.tick.types)
		tk.P90Ms = c.tick.lat.QuantileMs(90)
	}
	c.ticks = append(c.ticks, tk)
	_ = c.log.Add(c.tick.lat, prev, now, phase)
	if c.watch != nil {
		c.tick.second(&c.sec, phase, c.users)
		c.watch.Second(&c.sec)
	}
	c.prog.Status(fmt.Sprintf("oltp %-7s %5.0fs  tpm %8.0f  nopm %8.0f  art %7.2f ms  p90 %7.2f ms  errors %d",
		phase, tk.ElapsedS, tk.TPM, tk.NOPMClient, tk.ARTMs, tk.P90Ms, errs))
	if c.onTick != nil {
		c.onTick(tk)
	}
}

// TickColumns are the run's per-second figures as columns of the
// observers' timeseries, each row taking the tick nearest its time (within
// half a second).
type TickColumns []Tick

// Header names the columns.
func (tc TickColumns) Header() []string {
	return []string{"oltp_phase", "oltp_tpm_client", "oltp_nopm_client", "oltp_art_ms", "oltp_p90_ms", "oltp_errors", "oltp_users"}
}

// Row gives the tick nearest at, or empty cells.
func (tc TickColumns) Row(at time.Time) []string {
	i := sort.Search(len(tc), func(i int) bool { return !tc[i].At.Before(at) })
	best := -1
	for _, j := range []int{i - 1, i} {
		if j >= 0 && j < len(tc) && (best < 0 || absDur(tc[j].At.Sub(at)) < absDur(tc[best].At.Sub(at))) {
			best = j
		}
	}
	if best < 0 || absDur(tc[best].At.Sub(at)) > 500*time.Millisecond {
		return make([]string, len(tc.Header()))
	}
	return tc[best].cells()
}

func (t Tick) cells() []string {
	return []string{t.Phase, fmt.Sprintf("%.1f", t.TPM), fmt.Sprintf("%.1f", t.NOPMClient),
		fmt.Sprintf("%.3f", t.ARTMs), fmt.Sprintf("%.3f", t.P90Ms), fmt.Sprintf("%d", t.Errors), fmt.Sprintf("%d", t.Users)}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// WriteTimeseries writes the ticks as CSV, one row a second, with the
// columns they have in the observers' timeseries (used without observers).
func WriteTimeseries(w io.Writer, ticks []Tick) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(results.CSVRecord(append([]string{"time"}, TickColumns(nil).Header()...))); err != nil {
		return err
	}
	for _, t := range ticks {
		if err := cw.Write(results.CSVRecord(append([]string{t.At.UTC().Format(time.RFC3339Nano)}, t.cells()...))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
