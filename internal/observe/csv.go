package observe

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// csvColumns are timeseries.csv's observation columns, in order. A cell is
// empty when its metric was not measured in that second.
var csvColumns = []struct {
	name  string
	value func(o *results.Observe) string
}{
	{"cpu_busy_pct", func(o *results.Observe) string { return num(o.CPUBusyPct) }},
	{"cpu_user_pct", func(o *results.Observe) string { return num(o.CPUUserPct) }},
	{"cpu_sys_pct", func(o *results.Observe) string { return num(o.CPUSysPct) }},
	{"cpu_iowait_pct", func(o *results.Observe) string { return num(o.CPUIOWaitPct) }},
	{"cpu_steal_pct", func(o *results.Observe) string { return num(o.CPUStealPct) }},
	{"disk_r_iops", disk(func(d *results.ObserveDisk) *float64 { return d.RIOPS })},
	{"disk_w_iops", disk(func(d *results.ObserveDisk) *float64 { return d.WIOPS })},
	{"disk_r_mbps", disk(func(d *results.ObserveDisk) *float64 { return d.RMBps })},
	{"disk_w_mbps", disk(func(d *results.ObserveDisk) *float64 { return d.WMBps })},
	{"disk_r_await_ms", disk(func(d *results.ObserveDisk) *float64 { return d.RAwaitMs })},
	{"disk_w_await_ms", disk(func(d *results.ObserveDisk) *float64 { return d.WAwaitMs })},
	{"disk_await_ms", disk(func(d *results.ObserveDisk) *float64 { return d.AwaitMs })},
	{"disk_queue_size", disk(func(d *results.ObserveDisk) *float64 { return d.QueueSize })},
	{"disk_util_pct", disk(func(d *results.ObserveDisk) *float64 { return d.UtilPct })},
	{"io_some_pct", func(o *results.Observe) string {
		if o.IOPressure == nil {
			return ""
		}
		return num(o.IOPressure.SomePct)
	}},
	{"io_full_pct", func(o *results.Observe) string {
		if o.IOPressure == nil {
			return ""
		}
		return num(o.IOPressure.FullPct)
	}},
	{"mem_available_bytes", mem(func(m *results.ObserveMem) *uint64 { return m.AvailableBytes })},
	{"mem_cached_bytes", mem(func(m *results.ObserveMem) *uint64 { return m.CachedBytes })},
	{"mem_dirty_bytes", mem(func(m *results.ObserveMem) *uint64 { return m.DirtyBytes })},
	{"mem_writeback_bytes", mem(func(m *results.ObserveMem) *uint64 { return m.WritebackBytes })},
	{"db_active_sessions", dbf(func(d *results.ObserveDB) *float64 { return d.ActiveSessionsAvg })},
	{"db_blks_read", dbi(func(d *results.ObserveDB) *int64 { return d.BlksRead })},
	{"db_data_file_read_avg_ms", dbf(func(d *results.ObserveDB) *float64 { return d.DataFileReadAvgMs })},
	{"db_wal_write_avg_ms", dbf(func(d *results.ObserveDB) *float64 { return d.WALWriteAvgMs })},
	{"db_wal_sync_avg_ms", dbf(func(d *results.ObserveDB) *float64 { return d.WALSyncAvgMs })},
	{"db_hit_pct", dbf(func(d *results.ObserveDB) *float64 { return d.HitPct })},
	// Every data-file read, read-ahead included (InnoDB's).
	{"db_data_reads", dbi(func(d *results.ObserveDB) *int64 { return d.DataReads })},
	{"db_row_lock_waits", dbi(func(d *results.ObserveDB) *int64 { return d.RowLockWaits })},
}

// Extra is another source's columns, joined to the samples by time (the
// load generator's per-second figures, say).
type Extra interface {
	Header() []string
	// Row gives the source's cells for the sample that ends at at, empty
	// cells where it has nothing for that second.
	Row(at time.Time) []string
}

// WriteCSV writes a header and one row per sample: the sample's end time
// (RFC 3339, UTC), the columns above, then each extra source's columns.
func WriteCSV(w io.Writer, samples []Sample, extra ...Extra) error {
	cw := csv.NewWriter(w)
	row := make([]string, 0, len(csvColumns)+1)
	row = append(row, "time")
	for _, c := range csvColumns {
		row = append(row, c.name)
	}
	for _, e := range extra {
		row = append(row, e.Header()...)
	}
	if err := cw.Write(results.CSVRecord(row)); err != nil {
		return fmt.Errorf("write the observation timeseries: %w", err)
	}
	for _, s := range samples {
		row = append(row[:0], s.Time.UTC().Format(time.RFC3339Nano))
		for _, c := range csvColumns {
			row = append(row, c.value(s.Observe))
		}
		for _, e := range extra {
			row = append(row, e.Row(s.Time)...)
		}
		if err := cw.Write(results.CSVRecord(row)); err != nil {
			return fmt.Errorf("write the observation timeseries: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write the observation timeseries: %w", err)
	}
	return nil
}

func num(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func disk(f func(*results.ObserveDisk) *float64) func(*results.Observe) string {
	return func(o *results.Observe) string {
		if o.Disk == nil {
			return ""
		}
		return num(f(o.Disk))
	}
}

func mem(f func(*results.ObserveMem) *uint64) func(*results.Observe) string {
	return func(o *results.Observe) string {
		if o.Mem == nil || f(o.Mem) == nil {
			return ""
		}
		return strconv.FormatUint(*f(o.Mem), 10)
	}
}

func dbf(f func(*results.ObserveDB) *float64) func(*results.Observe) string {
	return func(o *results.Observe) string {
		if o.DB == nil {
			return ""
		}
		return num(f(o.DB))
	}
}

func dbi(f func(*results.ObserveDB) *int64) func(*results.Observe) string {
	return func(o *results.Observe) string {
		if o.DB == nil || f(o.DB) == nil {
			return ""
		}
		return strconv.FormatInt(*f(o.DB), 10)
	}
}
