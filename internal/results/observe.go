package results

import "time"

// Observe is what the host and the database did over one step's timed
// window (the "observe" key of every step). Rates and averages come from
// counters read at the window's two edges; waits come from the activity
// samples taken inside it. A field that could not be measured is absent,
// and Missing says why; no absent number is ever written as zero.
type Observe struct {
	// From and To are the instants of the two counter snapshots the rates
	// span; WindowS is the time between them.
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	WindowS float64   `json:"window_s"`

	// CPU shares of all CPUs' time. Busy is 100 - idle - iowait; sys
	// includes irq and softirq, user includes nice.
	CPUBusyPct   *float64 `json:"cpu_busy_pct,omitempty"`
	CPUUserPct   *float64 `json:"cpu_user_pct,omitempty"`
	CPUSysPct    *float64 `json:"cpu_sys_pct,omitempty"`
	CPUIOWaitPct *float64 `json:"cpu_iowait_pct,omitempty"`
	CPUStealPct  *float64 `json:"cpu_steal_pct,omitempty"`
	// CPUOutsidePct is the CPU used by processes other than calibra, its
	// children and the database server (kernel threads aside), as a share
	// of all CPUs: another load on the host. A process that exits inside
	// the window counts once its parent has reaped it; it never exceeds
	// cpu_busy_pct.
	CPUOutsidePct *float64 `json:"cpu_outside_pct,omitempty"`

	// Devices names the block devices under the storage path whose counters
	// make up Disk (kernel names, as in /proc/diskstats).
	Devices []string     `json:"devices,omitempty"`
	Disk    *ObserveDisk `json:"disk,omitempty"`
	// WALDevices and WALDisk are the WAL's storage when it has a device of
	// its own (--wal-path); when it shares the data's, Missing says so.
	WALDevices []string     `json:"wal_devices,omitempty"`
	WALDisk    *ObserveDisk `json:"wal_disk,omitempty"`

	// IOPressure is /proc/pressure/io: the share of the window in which some
	// (or all non-idle) tasks were stalled on I/O.
	IOPressure *IOPressure `json:"io_pressure,omitempty"`

	// Mem is /proc/meminfo at the window's end.
	Mem *ObserveMem `json:"mem,omitempty"`

	DB *ObserveDB `json:"db,omitempty"`

	// Replicas are the managed instance's standbys over the window
	// (--replicas), one entry each.
	Replicas []ObserveReplica `json:"replicas,omitempty"`

	// Waits is the AWR-like top-waits list, most time first: database time
	// per wait event, from pg_stat_activity samples (the ASH idea).
	Waits []Wait `json:"waits,omitempty"`

	// DeviceShare is the window's device I/O as a share of what the run's
	// device step did, for the oltp windows after one.
	DeviceShare *DeviceShare `json:"device_share,omitempty"`

	// Missing maps a metric (its JSON path, e.g. "disk.await_ms") to the
	// reason it is absent.
	Missing map[string]string `json:"missing,omitempty"`
}

// DeviceShare is a window's device I/O against the run's device step:
// the reads a second against the random read point nearest the window's
// mean read size and mean queue, the MB/s written against the write
// point nearest its mean write size and queue; each Of names that point.
type DeviceShare struct {
	ReadIOPS  *float64 `json:"read_iops,omitempty"`
	ReadPct   *float64 `json:"read_pct,omitempty"`
	ReadOf    string   `json:"read_of,omitempty"`
	WriteMBPS *float64 `json:"write_mbps,omitempty"`
	WritePct  *float64 `json:"write_pct,omitempty"`
	WriteOf   string   `json:"write_of,omitempty"`
}

// ObserveDisk is /proc/diskstats over the window, as iostat derives it.
type ObserveDisk struct {
	RIOPS *float64 `json:"r_iops,omitempty"`
	WIOPS *float64 `json:"w_iops,omitempty"`
	RMBps *float64 `json:"r_mbps,omitempty"` // 10^6 bytes per second
	WMBps *float64 `json:"w_mbps,omitempty"`
	// AwaitMs is Δ(read + write ticks) / Δ(reads + writes): the mean time
	// an I/O spent queued and in service; absent when no I/O completed.
	AwaitMs  *float64 `json:"await_ms,omitempty"`
	RAwaitMs *float64 `json:"r_await_ms,omitempty"`
	WAwaitMs *float64 `json:"w_await_ms,omitempty"`
	// QueueSize is the mean number of I/Os in flight (iostat's aqu-sz).
	QueueSize *float64 `json:"queue_size,omitempty"`
	// UtilPct is the share of the window with at least one I/O in flight.
	UtilPct *float64 `json:"util_pct,omitempty"`
}

// IOPressure is pressure-stall information for I/O.
type IOPressure struct {
	SomePct *float64 `json:"some_pct,omitempty"`
	FullPct *float64 `json:"full_pct,omitempty"`
}

// ObserveMem is a snapshot of memory that tells page-cache effects apart.
type ObserveMem struct {
	AvailableBytes *uint64 `json:"available_bytes,omitempty"`
	CachedBytes    *uint64 `json:"cached_bytes,omitempty"`
	DirtyBytes     *uint64 `json:"dirty_bytes,omitempty"`
	WritebackBytes *uint64 `json:"writeback_bytes,omitempty"`
}

// ObserveDB is the database's own counters over the window. Every read the
// database counts may have been served by the OS page cache; compare
// DataFileReadAvgMs with disk.r_await_ms to tell. Backends publish their
// counters between transactions at most once a second, so the counts at
// each edge may lag the load by about a second; averages are unaffected.
type ObserveDB struct {
	Database string `json:"database"`
	// ActiveSessionsAvg is sampled database time / window: the mean number
	// of active backends (AWR's average active sessions).
	ActiveSessionsAvg *float64 `json:"active_sessions_avg,omitempty"`
	WaitSamples       int      `json:"wait_samples"`
	WaitSamplesFailed int      `json:"wait_samples_failed,omitempty"`
	WaitIntervalMs    float64  `json:"wait_interval_ms"`

	// From pg_stat_database: blocks read (from the OS) and found in
	// shared buffers, and the mean data-file read time, Δblk_read_time /
	// Δblks_read (needs track_io_timing).
	BlksRead          *int64   `json:"blks_read,omitempty"`
	BlksHit           *int64   `json:"blks_hit,omitempty"`
	HitPct            *float64 `json:"hit_pct,omitempty"`
	DataFileReadAvgMs *float64 `json:"data_file_read_avg_ms,omitempty"`

	// From pg_stat_io (PostgreSQL 16+), client backends, object relation,
	// context normal: single-block reads, the closest to Oracle's "db file
	// sequential read".
	ClientReads     *int64   `json:"client_reads,omitempty"`
	ClientReadAvgMs *float64 `json:"client_read_avg_ms,omitempty"`

	// WAL writes and syncs (pg_stat_wal, PostgreSQL 14-17; pg_stat_io
	// object wal from 18) and their mean times (needs track_wal_io_timing).
	WALWrites     *int64   `json:"wal_writes,omitempty"`
	WALWriteAvgMs *float64 `json:"wal_write_avg_ms,omitempty"`
	WALSyncs      *int64   `json:"wal_syncs,omitempty"`
	WALSyncAvgMs  *float64 `json:"wal_sync_avg_ms,omitempty"`
	WALBytes      *int64   `json:"wal_bytes,omitempty"`
	// WALFPI are the full-page images the WAL took (pg_stat_wal.wal_fpi).
	WALFPI            *int64 `json:"wal_fpi,omitempty"`
	Checkpoints       *int64 `json:"checkpoints,omitempty"`
	BuffersCheckpoint *int64 `json:"buffers_checkpoint,omitempty"`

	// Every read, write and sync of the engine's data files, on demand and
	// read-ahead alike (MariaDB's Innodb_data_*: the data files and the
	// doublewrite buffer, not the redo log; PostgreSQL gives the bytes
	// written alone, by every process, from pg_stat_io from 16, from
	// pg_stat_bgwriter's buffers before). Where these are given,
	// DataFileReadAvgMs is the mean time of one such read.
	DataReads      *int64 `json:"data_reads,omitempty"`
	DataReadBytes  *int64 `json:"data_read_bytes,omitempty"`
	DataWrites     *int64 `json:"data_writes,omitempty"`
	DataWriteBytes *int64 `json:"data_write_bytes,omitempty"`
	DataSyncs      *int64 `json:"data_syncs,omitempty"`
	// Row lock waits that ended in the window and their mean time
	// (InnoDB's Innodb_row_lock_waits and _time).
	RowLockWaits *int64   `json:"row_lock_waits,omitempty"`
	RowLockAvgMs *float64 `json:"row_lock_avg_ms,omitempty"`
	// TimedWaits are the wait events the server itself timed in the
	// window, most time first, for all its threads, background ones too
	// (MariaDB's performance_schema): AWR's top timed events, where Waits
	// is sampled database time.
	TimedWaits []TimedWait `json:"timed_waits,omitempty"`
	// Nodes are a Galera cluster's nodes over the window, each its own.
	Nodes []ObserveNode `json:"nodes,omitempty"`
}

// ObserveNode is one Galera node over a window: the share of the window
// its replication was paused by flow control (Δwsrep_flow_control_paused_ns
// / window), the pause requests it sent and received
// (wsrep_flow_control_sent, _recv), its transactions that failed
// certification at commit (wsrep_local_cert_failures) or were aborted by
// another node's write (wsrep_local_bf_aborts), and the write sets it
// replicated (wsrep_replicated).
type ObserveNode struct {
	Node                 int      `json:"node"`
	FlowControlPausedPct *float64 `json:"flow_control_paused_pct,omitempty"`
	FlowControlSent      *int64   `json:"flow_control_sent,omitempty"`
	FlowControlRecv      *int64   `json:"flow_control_recv,omitempty"`
	CertFailures         *int64   `json:"local_cert_failures,omitempty"`
	BFAborts             *int64   `json:"local_bf_aborts,omitempty"`
	Replicated           *int64   `json:"replicated,omitempty"`
}

// TimedWait is one wait event as the server timed it over the window.
type TimedWait struct {
	Class   string  `json:"class"`
	Event   string  `json:"event"`
	Waits   int64   `json:"waits"`
	Seconds float64 `json:"seconds"`
	AvgMs   float64 `json:"avg_ms"`
}

// Wait is one row of the top-waits list. Seconds is samples × the sampling
// interval; SharePct is its share of all sampled database time. Class
// "CPU", event "CPU" stands for an active backend with no wait event: on
// CPU, or in code PostgreSQL does not instrument. AvgMs is the mean latency
// of one such wait where the server's counters give it (IO:DataFileRead
// from db.data_file_read_avg_ms, IO:WALWrite and IO:WALSync from the WAL
// averages).
type Wait struct {
	Class    string   `json:"class"`
	Event    string   `json:"event"`
	Samples  int      `json:"samples"`
	Seconds  float64  `json:"seconds"`
	SharePct float64  `json:"share_pct"`
	AvgMs    *float64 `json:"avg_ms,omitempty"`
}

// ObserveReplica is one standby over the window. The lags come from the
// primary's pg_stat_replication, sampled every second and at the window's
// edges: the mean and the largest of the samples that had a value (a lag
// time is null while a standby is caught up and idle). Its I/O is its own
// processes' (postmaster and children, /proc/PID/io) and, when its data
// lie on a device apart from the primary's, that device's.
type ObserveReplica struct {
	Name string `json:"name"`
	// State and SyncState are pg_stat_replication's at the window's end;
	// States counts the samples in each "state/sync_state" ("absent" when
	// the standby was not connected).
	State     string         `json:"state,omitempty"`
	SyncState string         `json:"sync_state,omitempty"`
	States    map[string]int `json:"states,omitempty"`
	Samples   int            `json:"samples"`
	// Time between the primary flushing WAL and the standby writing,
	// flushing and replaying it (pg_stat_replication's write_lag,
	// flush_lag, replay_lag).
	WriteLagMs  *Spread `json:"write_lag_ms,omitempty"`
	FlushLagMs  *Spread `json:"flush_lag_ms,omitempty"`
	ReplayLagMs *Spread `json:"replay_lag_ms,omitempty"`
	// ReplayLagBytes is the WAL the standby had not replayed yet:
	// pg_current_wal_lsn() - replay_lsn.
	ReplayLagBytes *Spread `json:"replay_lag_bytes,omitempty"`
	// The standby's processes over the window: ReadBytes what they fetched
	// from storage (/proc/PID/io read_bytes), WriteCallBytes and
	// WriteCalls what they wrote through write calls (wchar, syscw: WAL
	// received, pages its restartpoints wrote; the page cache in between,
	// and a few bytes of replies to the primary). Rates in 10^6 bytes/s.
	ReadBytes      *int64   `json:"read_bytes,omitempty"`
	WriteCallBytes *int64   `json:"write_call_bytes,omitempty"`
	WriteCalls     *int64   `json:"write_calls,omitempty"`
	ReadMBps       *float64 `json:"r_mbps,omitempty"`
	WriteMBps      *float64 `json:"w_mbps,omitempty"`
	// Devices and Disk are its own device's counters, when its data are
	// not on the primary's data or WAL device.
	Devices []string     `json:"devices,omitempty"`
	Disk    *ObserveDisk `json:"disk,omitempty"`
}

// Spread is the mean and the maximum of a figure's samples.
type Spread struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}
