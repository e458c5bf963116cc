package report

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

// window returns the timeseries rows inside the step's observed window (its
// timed window when it has one), or its whole span.
func (b *builder) window() []int {
	from, to := b.bounds()
	var rows []int
	for i, t := range b.ts.Time {
		if !t.Before(from) && !t.After(to) {
			rows = append(rows, i)
		}
	}
	return rows
}

// bounds is the span the step's time charts cover: from its start (so a
// ramp-up shows) to its end.
func (b *builder) bounds() (time.Time, time.Time) {
	from, to := b.step.StartedAt, b.step.StartedAt.Add(24*time.Hour)
	if b.step.FinishedAt != nil {
		to = *b.step.FinishedAt
	}
	if o := b.step.Observe; o != nil && o.To.After(to) {
		to = o.To
	}
	// A sample is stamped at its end: take the one that covers the last second.
	return from, to.Add(500 * time.Millisecond)
}

// seconds are the rows' times from the step's start.
func (b *builder) seconds(rows []int) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = b.ts.Time[r].Sub(b.step.StartedAt).Seconds()
	}
	return out
}

func pickF(col []float64, rows []int) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		if col == nil {
			out[i] = nan
		} else {
			out[i] = col[r]
		}
	}
	return out
}

func pick(col []string, rows []int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		if col != nil {
			out[i] = col[r]
		}
	}
	return out
}

// span is the x range of the rows whose label is want, widened by the
// second before the first one (a sample covers the second before it).
func span(x []float64, labels []string, want string) (float64, float64, bool) {
	first, last := -1, -1
	for i, l := range labels {
		if l == want {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0, 0, false
	}
	from := x[first] - 1
	if first > 0 {
		from = x[first-1]
	}
	return from, x[last], true
}

// observe adds what the host and the database did over the step's window:
// the figures, the top waits (AWR's view) and, from timeseries.csv, the
// CPU and disk over time.
func (b *builder) observe() {
	o := b.step.Observe
	if o == nil && b.ts == nil {
		return
	}
	b.sec.Blocks = append(b.sec.Blocks, Block{Heading: "Host and database over the step"})
	if b.ts != nil {
		b.timeCharts()
	}
	if o == nil {
		return
	}
	b.table(Table{Caption: fmt.Sprintf("CPU over the window (%s s)", results.Num(o.WindowS)),
		Head: []string{"CPU busy %", "user %", "sys %", "I/O wait %", "outside calibra %"},
		Rows: [][]Cell{cells(results.NumPtr(o.CPUBusyPct), results.NumPtr(o.CPUUserPct), results.NumPtr(o.CPUSysPct), results.NumPtr(o.CPUIOWaitPct), results.NumPtr(o.CPUOutsidePct))}})
	b.storage(o)
	if o.DB != nil {
		b.dbCounters(o.DB)
	}
	b.standbys(o.Replicas)
	if o.DB != nil {
		b.clusterNodes(o.DB.Nodes)
	}
	if len(o.Waits) > 0 {
		t := Table{Caption: "Top waits (sampled database time; avg ms from the server's counters)", Headline: true,
			Head: []string{"event", "class", "seconds", "share %", "avg ms", "samples"}}
		for _, w := range o.Waits {
			row := cells(w.Event, w.Class, results.Num(w.Seconds), results.Num(w.SharePct), results.NumPtr(w.AvgMs), results.Int(int64(w.Samples)))
			row[1].Class = "t"
			t.Rows = append(t.Rows, row)
		}
		b.table(t)
	}
	b.missing(o.Missing)
}

// timeCharts draws, from timeseries.csv, the CPU, the disk and the
// latencies over the step's window.
func (b *builder) timeCharts() {
	rows := b.window()
	if len(rows) < 2 {
		b.note("Fewer than two samples in this step's window: no time charts.")
		return
	}
	x := assets.Nums(b.seconds(rows))
	line := func(col, name string, dashed bool) assets.Series {
		return assets.Series{Name: name, Y: assets.Nums(pickF(b.ts.Float(col), rows)), Dashed: dashed}
	}
	const xn = "seconds from the step's start"
	b.charts("",
		b.chart("CPU", assets.Chart{XName: xn, YName: "% of all CPUs", X: x,
			Series: []assets.Series{line("cpu_busy_pct", "busy %", false), line("cpu_iowait_pct", "I/O wait %", false)}}),
		b.chart("Disk IOPS", assets.Chart{XName: xn, YName: "IOPS", X: x,
			Series: []assets.Series{line("disk_r_iops", "read IOPS", false), line("disk_w_iops", "write IOPS", false)}}),
		b.chart("Disk MB/s", assets.Chart{XName: xn, YName: "MB/s", X: x,
			Series: []assets.Series{line("disk_r_mbps", "read MB/s", false), line("disk_w_mbps", "write MB/s", false)}}),
		b.chart("Latency", assets.Chart{XName: xn, YName: "ms", X: x,
			Series: []assets.Series{line("disk_await_ms", "disk await ms", false), line("db_data_file_read_avg_ms", "data file read ms", true),
				line("db_wal_sync_avg_ms", b.r.words.Log+" sync ms", true)}}))
}

// storage shows the data's storage and, when --wal-path put it apart,
// the log's, side by side, and the window's share of the device layer.
func (b *builder) storage(o *results.Observe) {
	st := Table{Caption: "Storage over the window", Head: []string{"storage", "device", "read IOPS", "write IOPS", "read MB/s", "write MB/s", "await ms", "util %"}}
	for _, d := range []struct {
		role    string
		devices []string
		disk    *results.ObserveDisk
	}{{"data", o.Devices, o.Disk}, {b.r.words.Log, o.WALDevices, o.WALDisk}} {
		if d.disk == nil {
			continue
		}
		row := cells(d.role, strings.Join(d.devices, ", "), results.NumPtr(d.disk.RIOPS), results.NumPtr(d.disk.WIOPS), results.NumPtr(d.disk.RMBps), results.NumPtr(d.disk.WMBps),
			results.NumPtr(d.disk.AwaitMs), results.NumPtr(d.disk.UtilPct))
		row[1].Class = "t"
		st.Rows = append(st.Rows, row)
	}
	b.table(st)
	if sh := o.DeviceShare; sh != nil {
		t := Table{Caption: "Share of the device layer (the run's device step at the nearest spec)", Headline: true, Head: []string{"I/O", "over the window", "of device %", "device point"}}
		if sh.ReadPct != nil {
			t.Rows = append(t.Rows, append(cells("reads", results.NumPtr(sh.ReadIOPS)+" IOPS", results.NumPtr(sh.ReadPct)), Cell{Text: sh.ReadOf, Class: "t"}))
		}
		if sh.WritePct != nil {
			t.Rows = append(t.Rows, append(cells("writes", results.NumPtr(sh.WriteMBPS)+" MB/s", results.NumPtr(sh.WritePct)), Cell{Text: sh.WriteOf, Class: "t"}))
		}
		b.table(t)
	}
}

// dbCounter is a database counter the report can show: its name in
// results.json, a neutral head and its value.
type dbCounter struct {
	field, head string
	value       func(*results.ObserveDB) string
}

// dbCounterList are the database counters, in the order an engine that
// names none sees those measured.
var dbCounterList = []dbCounter{
	{"active_sessions_avg", "active sessions", func(db *results.ObserveDB) string { return results.NumPtr(db.ActiveSessionsAvg) }},
	{"blks_read", "blocks read", func(db *results.ObserveDB) string { return intPtr(db.BlksRead) }},
	{"hit_pct", "cache hit %", func(db *results.ObserveDB) string { return results.NumPtr(db.HitPct) }},
	{"data_reads", "data file reads", func(db *results.ObserveDB) string { return intPtr(db.DataReads) }},
	{"data_file_read_avg_ms", "data file read ms", func(db *results.ObserveDB) string { return results.NumPtr(db.DataFileReadAvgMs) }},
	{"data_writes", "data file writes", func(db *results.ObserveDB) string { return intPtr(db.DataWrites) }},
	{"wal_write_avg_ms", "log write ms", func(db *results.ObserveDB) string { return results.NumPtr(db.WALWriteAvgMs) }},
	{"wal_sync_avg_ms", "log sync ms", func(db *results.ObserveDB) string { return results.NumPtr(db.WALSyncAvgMs) }},
	{"checkpoints", "checkpoints", func(db *results.ObserveDB) string { return intPtr(db.Checkpoints) }},
	{"row_lock_waits", "row lock waits", func(db *results.ObserveDB) string { return intPtr(db.RowLockWaits) }},
	{"row_lock_avg_ms", "row lock ms", func(db *results.ObserveDB) string { return results.NumPtr(db.RowLockAvgMs) }},
}

// dbCounters shows the database's counters over the window: those the
// engine names, in its words, else every one measured.
func (b *builder) dbCounters(db *results.ObserveDB) {
	caption := "Database counters (" + db.Database + ")"
	if of := b.r.words.CountersOf; of != "" {
		caption = "Database counters (" + db.Database + ", " + of + ")"
	}
	t := Table{Caption: caption, Rows: [][]Cell{nil}}
	for _, c := range b.shownCounters(db) {
		t.Head = append(t.Head, c.head)
		t.Rows[0] = append(t.Rows[0], cells(c.value(db))...)
	}
	if len(t.Head) > 0 {
		b.table(t)
	}
}

func (b *builder) shownCounters(db *results.ObserveDB) []dbCounter {
	var shown []dbCounter
	named := b.r.words.Counters
	for _, c := range dbCounterList {
		if len(named) == 0 && c.value(db) != "n/a" {
			shown = append(shown, c)
		}
	}
	for _, n := range named {
		for _, c := range dbCounterList {
			if c.field == n.Field {
				c.head = cmp.Or(n.Head, c.head)
				shown = append(shown, c)
			}
		}
	}
	return shown
}

// standbys shows each standby over the window: how far behind it ran
// (with synchronous commit, a commit waits for its flush or replay, inside
// every transaction's response time) and what it wrote.
func (b *builder) standbys(rs []results.ObserveReplica) {
	if len(rs) == 0 {
		return
	}
	t := Table{Caption: "Standbys over the window (lag: " + b.r.words.StandbyLag + ", mean / max of the samples)", Headline: true,
		Head: []string{"standby", "state at the end", "write lag ms", "flush lag ms", "replay lag ms", b.r.words.Log + " not replayed, bytes", "write MB/s", "samples"}}
	spread := func(s *results.Spread) string {
		if s == nil {
			return "n/a"
		}
		return results.Num(s.Mean) + " / " + results.Num(s.Max)
	}
	for _, r := range rs {
		row := cells(r.Name, r.State+"/"+r.SyncState, spread(r.WriteLagMs), spread(r.FlushLagMs), spread(r.ReplayLagMs), spread(r.ReplayLagBytes),
			results.NumPtr(r.WriteMBps), results.Int(int64(r.Samples)))
		row[0].Class, row[1].Class = "t", "t"
		t.Rows = append(t.Rows, row)
	}
	b.table(t)
}

// clusterNodes shows each node's replication over the window: flow
// control and certification.
func (b *builder) clusterNodes(ns []results.ObserveNode) {
	if len(ns) == 0 {
		return
	}
	t := Table{Caption: "Nodes of the " + b.r.words.Cluster + " over the window", Headline: true,
		Head: []string{"node", "flow control paused %", "flow control sent", "received", "certification failures", "aborted by replication", "write-sets replicated"}}
	for _, n := range ns {
		t.Rows = append(t.Rows, cells(results.Int(int64(n.Node)), results.NumPtr(n.FlowControlPausedPct), intPtr(n.FlowControlSent), intPtr(n.FlowControlRecv),
			intPtr(n.CertFailures), intPtr(n.BFAborts), intPtr(n.Replicated)))
	}
	b.table(t)
}

func intPtr(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return results.Int(*v)
}
