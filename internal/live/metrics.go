package live

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/calibra-bench/calibra/internal/results"
)

// The metrics, as docs/metrics.md defines them.
var (
	stepInfo  = desc("calibra_step_info", "The step that runs, as the progress line names it.", "step")
	phaseInfo = desc("calibra_phase_info", "What the step is doing: rampup or measure for an oltp load, the point for a sweep.", "phase")

	users        = desc("calibra_oltp_users", "Users (terminals) the oltp load drives now.")
	newOrders    = desc("calibra_oltp_new_orders_total", "New-Order transactions committed (the client's count: NOPM's).")
	transactions = desc("calibra_oltp_transactions_total", "Transactions ended, by type and outcome (commit, rollback, error).", "type", "outcome")
	latency      = desc("calibra_oltp_transaction_duration_seconds", "Latency of completed transactions (committed or rolled back), by type: the values calibra's HdrHistograms record, counted at fixed bounds.", "type")

	cpuBusy   = desc("calibra_cpu_busy_ratio", "Share of all CPUs' time busy (not idle, not iowait) over the observers' last interval.")
	cpuIOWait = desc("calibra_cpu_iowait_ratio", "Share of all CPUs' time in iowait over the observers' last interval.")
	diskIOPS  = desc("calibra_disk_iops", "I/Os a second the storage's block device completed over the observers' last interval.", "direction")
	diskBytes = desc("calibra_disk_bytes_per_second", "Bytes a second the storage's block device moved over the observers' last interval.", "direction")
	diskAwait = desc("calibra_disk_await_seconds", "Mean time of one I/O on the storage's block device, queue included, over the observers' last interval.", "direction")
	diskUtil  = desc("calibra_disk_utilization_ratio", "Share of the observers' last interval the block device had I/O in flight.")

	dbActive    = desc("calibra_db_active_sessions", "Mean active sessions of the database over the observers' last interval (sampled database time).")
	dbHit       = desc("calibra_db_cache_hit_ratio", "Share of the database's block requests its own cache served over the observers' last interval.")
	dbRate      = desc("calibra_db_events_per_second", "The database's own counters a second over the observers' last interval, by counter (results.json's observe.db key).", "counter")
	dbWALBytes  = desc("calibra_db_wal_bytes_per_second", "Bytes a second the database wrote to its log over the observers' last interval.")
	dbDataBytes = desc("calibra_db_data_bytes_per_second", "Bytes a second the database read or wrote in its data files over the observers' last interval.", "direction")

	devIOPS    = desc("calibra_device_point_iops", "A finished device point's IOPS (fio), by spec and queue depth.", "spec", "qd")
	devBytes   = desc("calibra_device_point_bytes_per_second", "A finished device point's throughput (fio), by spec and queue depth.", "spec", "qd")
	devLatency = desc("calibra_device_point_latency_seconds", "A finished device point's completion latency (fio's clat), by spec, queue depth and statistic (mean, p50, p99, p999, max).", "spec", "qd", "stat")
	iocalIOPS  = desc("calibra_iocal_point_iops", "A finished iocal point's I/Os a second through the database, by test and jobs.", "test", "jobs")
	iocalBytes = desc("calibra_iocal_point_bytes_per_second", "A finished iocal point's table data moved a second, by test and jobs.", "test", "jobs")
	iocalLat   = desc("calibra_iocal_point_latency_seconds", "A finished iocal point's latency of one call, by test, jobs and statistic (mean, p99).", "test", "jobs", "stat")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// emitter sends const metrics to a scrape.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func (e emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// opt sends a gauge of v times scale when v was measured: a figure
// calibra could not measure is absent, never zero.
func (e emitter) opt(d *prometheus.Desc, v *float64, scale float64, labels ...string) {
	if v != nil {
		e.gauge(d, *v*scale, labels...)
	}
}

// perSecond sends a gauge of the count n over the interval when counted.
func (e emitter) perSecond(d *prometheus.Desc, n *int64, seconds float64, labels ...string) {
	if n != nil && seconds > 0 {
		e.gauge(d, float64(*n)/seconds, labels...)
	}
}

const (
	pct = 0.01 // a share in percent to a ratio
	ms  = 1e-3 // milliseconds to seconds
	us  = 1e-6 // microseconds to seconds
	mb  = 1e6  // MB (10^6 bytes) to bytes
)

func collectObserve(e emitter, o *results.Observe) {
	if o == nil {
		return
	}
	e.opt(cpuBusy, o.CPUBusyPct, pct)
	e.opt(cpuIOWait, o.CPUIOWaitPct, pct)
	if d := o.Disk; d != nil {
		e.opt(diskIOPS, d.RIOPS, 1, "read")
		e.opt(diskIOPS, d.WIOPS, 1, "write")
		e.opt(diskBytes, d.RMBps, mb, "read")
		e.opt(diskBytes, d.WMBps, mb, "write")
		e.opt(diskAwait, d.RAwaitMs, ms, "read")
		e.opt(diskAwait, d.WAwaitMs, ms, "write")
		e.opt(diskUtil, d.UtilPct, pct)
	}
	db := o.DB
	if db == nil {
		return
	}
	e.opt(dbActive, db.ActiveSessionsAvg, 1)
	e.opt(dbHit, db.HitPct, pct)
	for _, c := range []struct {
		key string
		n   *int64
	}{
		{"blks_read", db.BlksRead}, {"blks_hit", db.BlksHit}, {"client_reads", db.ClientReads},
		{"wal_writes", db.WALWrites}, {"wal_syncs", db.WALSyncs}, {"wal_fpi", db.WALFPI},
		{"checkpoints", db.Checkpoints}, {"buffers_checkpoint", db.BuffersCheckpoint},
		{"data_reads", db.DataReads}, {"data_writes", db.DataWrites}, {"data_syncs", db.DataSyncs},
		{"row_lock_waits", db.RowLockWaits},
	} {
		e.perSecond(dbRate, c.n, o.WindowS, c.key)
	}
	e.perSecond(dbWALBytes, db.WALBytes, o.WindowS)
	e.perSecond(dbDataBytes, db.DataReadBytes, o.WindowS, "read")
	e.perSecond(dbDataBytes, db.DataWriteBytes, o.WindowS, "write")
}

func collectDevice(e emitter, k [2]string, p results.DevicePoint) {
	e.gauge(devIOPS, p.IOPS, k[0], k[1])
	e.gauge(devBytes, p.MBps*mb, k[0], k[1])
	if l := p.LatUs; l != nil {
		for _, s := range []struct {
			stat string
			v    float64
		}{{"mean", l.Mean}, {"p50", l.P50}, {"p99", l.P99}, {"p999", l.P999}, {"max", l.Max}} {
			e.gauge(devLatency, s.v*us, k[0], k[1], s.stat)
		}
	}
}

func collectIOCal(e emitter, k [2]string, p results.IOCalPoint) {
	if p.IOPS > 0 {
		e.gauge(iocalIOPS, p.IOPS, k[0], k[1])
	}
	if p.MBPS > 0 {
		e.gauge(iocalBytes, p.MBPS*mb, k[0], k[1])
	}
	if l := p.LatMs; l != nil {
		e.gauge(iocalLat, l.Mean*ms, k[0], k[1], "mean")
		e.gauge(iocalLat, l.P99*ms, k[0], k[1], "p99")
	}
}
