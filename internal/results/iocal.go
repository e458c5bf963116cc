package results

import "fmt"

// KindIOCal is I/O through the database (layers 2 and 3).
const KindIOCal = "iocal"

func init() {
	RegisterKind(KindIOCal, func() any { return &IOCal{} })
}

// IOCal is an I/O calibration through the database (kind "iocal"), the
// open counterpart of CALIBRATE_IO and the peakmarks sweeps.
type IOCal struct {
	DataBytes      int64  `json:"data_bytes"`       // calibration data on disk
	BlockSizeBytes int    `json:"block_size_bytes"` // the database block in force
	ReadMethod     string `json:"read_method"`      // how the random test reads blocks, e.g. "tid array"
	// ReadsPerCall is the random blocks the server reads in one call of
	// the random test.
	ReadsPerCall     int    `json:"reads_per_call,omitempty"`
	ClientReadMethod string `json:"client_read_method,omitempty"`
	SeqReadMethod    string `json:"seq_read_method,omitempty"`
	WriteMethod      string `json:"write_method,omitempty"`
	CommitMethod     string `json:"commit_method,omitempty"`
	Tables           int    `json:"tables,omitempty"` // the data's tables, one per loader
	// IOMethod is how the server issues its data-file reads where it has
	// a choice (PostgreSQL 18's io_method: sync, worker, io_uring), as in
	// force, set or not.
	IOMethod string `json:"io_method,omitempty"`
	// LoadMBPS is the calibration data's size / seconds to load it (COPY
	// FREEZE, WAL-logged); null when the data was reused.
	LoadMBPS *float64 `json:"load_mbps,omitempty"`
	PointS   float64  `json:"point_s"`  // timed window of each point
	WarmupS  float64  `json:"warmup_s"` // unmeasured run before each point
	// ColdStarts counts the restarts (with the server's files evicted from
	// the OS page cache) made before each test.
	ColdStarts int `json:"cold_starts"`
	// CacheDominated is set, with the reason, when reads may have been
	// served from a cache rather than the storage.
	CacheDominated string         `json:"cache_dominated,omitempty"`
	Limits         *AppliedLimits `json:"limits,omitempty"`
	// RandomRead is the random read issued by the server, many blocks a
	// call; ClientRead the same reads one a query, as a client sees them.
	RandomRead *IOCalRandom      `json:"random_read,omitempty"`
	ClientRead *IOCalRandom      `json:"client_read,omitempty"`
	SeqRead    *IOCalSeq         `json:"seq_read,omitempty"`
	SeqWrite   *IOCalSeq         `json:"seq_write,omitempty"`
	Commit     *IOCalCommit      `json:"commit,omitempty"`
	Missing    map[string]string `json:"missing,omitempty"`
	Notes      []string          `json:"notes,omitempty"`
	// Warnings are caveats on points' figures, each one sentence naming
	// its point: one measured from few operations, or whose operations
	// outlasted it.
	Warnings []string `json:"warnings,omitempty"`
}

// IOCalRandom is the random single-block read sweep over parallel jobs.
type IOCalRandom struct {
	Points         []IOCalPoint `json:"points"`
	MaxIOPS        *float64     `json:"max_iops"` // null when no point met max_latency_ms
	LatencyMsAtMax *float64     `json:"latency_ms_at_max"`
	// DeviceIOPSAtMax is the reads a second that reached the device in the
	// max_iops point: the storage's confirmation of the database's figure.
	DeviceIOPSAtMax *float64 `json:"device_iops_at_max"`
	MaxLatencyMs    float64  `json:"max_latency_ms"`
	SaturationJobs  *int     `json:"saturation_jobs"`
}

// IOCalPoint is one point of a sweep, over its timed window.
type IOCalPoint struct {
	Jobs int     `json:"jobs"`
	IOPS float64 `json:"iops,omitempty"`
	DBPS float64 `json:"dbps,omitempty"` // database blocks read (or written) per second
	// MBPS is the table data moved a second: absent from commit points,
	// which move none (a point of any other test waits for its last call,
	// so it always moves some).
	MBPS       float64       `json:"mbps,omitempty"`
	LatMs      *IOCalLatency `json:"lat_ms,omitempty"`
	CPUBusyPct *float64      `json:"cpu_busy_pct"`
	CPUSysPct  *float64      `json:"cpu_sys_pct"`
	Seconds    float64       `json:"seconds"`
	// The storage's view of the point (observers, /proc/diskstats): what
	// reached the device, to tell storage from cache.
	DiskRIOPS *float64 `json:"disk_r_iops,omitempty"`
	DiskRMBPS *float64 `json:"disk_r_mbps,omitempty"`
	DiskWMBPS *float64 `json:"disk_w_mbps,omitempty"`
	// DBHitPct is the share of block requests served by the database cache.
	DBHitPct *float64 `json:"db_hit_pct,omitempty"`
	// Reads issued by the server, side by side with the device: RowsPS is
	// the rows (one a block) the calls returned a second, ServerReadsPS
	// the blocks the server itself counted reading from the OS a second
	// (pg_stat_database blks_read, Innodb_buffer_pool_reads),
	// ServerReadMs its own mean time of one data-file read (track_io_timing's
	// blk_read_time / blks_read; performance_schema's innodb_data_file
	// reads), DiskRAwaitMs the device's mean read await (/proc/diskstats).
	RowsPS        float64  `json:"rows_ps,omitempty"`
	ServerReadsPS *float64 `json:"server_reads_ps,omitempty"`
	ServerReadMs  *float64 `json:"server_read_ms,omitempty"`
	DiskRAwaitMs  *float64 `json:"disk_r_await_ms,omitempty"`
	// The commit test: commits a second (client count), the server's WAL
	// (redo) writes, syncs and bytes a second and its mean sync time, and
	// the WAL's device's writes a second and write await (the data's
	// device when the WAL has none of its own).
	CommitsPS    float64  `json:"commits_ps,omitempty"`
	WALWritesPS  *float64 `json:"wal_writes_ps,omitempty"`
	WALSyncsPS   *float64 `json:"wal_syncs_ps,omitempty"`
	WALMBPS      *float64 `json:"wal_mbps,omitempty"`
	ServerSyncMs *float64 `json:"server_wal_sync_ms,omitempty"`
	DiskWIOPS    *float64 `json:"disk_w_iops,omitempty"`
	DiskWAwaitMs *float64 `json:"disk_w_await_ms,omitempty"`
	// The write test's view of the device: what the server wrote to its
	// data files (DataWMBPS) and WAL (WALMBPS, above), the full-page
	// images among the WAL's records (WALFPIPS, PostgreSQL), all beside
	// what the device wrote (DiskWMBPS), and that as a share of the
	// device step's sequential write at the nearest outstanding I/O
	// (DiskWSharePct, of DeviceShareOf).
	DataWMBPS     *float64 `json:"data_w_mbps,omitempty"`
	WALFPIPS      *float64 `json:"wal_fpi_ps,omitempty"`
	DiskWSharePct *float64 `json:"disk_w_share_pct,omitempty"`
	// DeviceSharePct is the point's rate as a share of what the run's
	// device step did at the nearest access spec and concurrency
	// (DeviceShareOf names that point): reads a second for random reads,
	// MB/s for sequential ones.
	DeviceSharePct *float64 `json:"device_share_pct,omitempty"`
	DeviceShareOf  string   `json:"device_share_of,omitempty"`
	// LimitedBy is what bounded this point (internal/verdict), from the
	// observations of its own window.
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
	// Missing says why the point lacks the server's own figures, when
	// its window's database counters could not be read ("db": the
	// observer's error).
	Missing map[string]string `json:"missing,omitempty"`
}

// HeadlineLimit is what limited the point of the calibration's headline
// figure (max IOPS, or else the best sequential read): the whole step's
// window mixes its points and would dilute it. ok is false when there is
// no such point.
func (c *IOCal) HeadlineLimit() (string, *Evidence, bool) {
	best, what := c.RandomRead.MaxPoint(), "max IOPS"
	if best == nil {
		best, what = c.SeqRead.MaxPoint(), "max sequential MB/s"
	}
	if best == nil || best.LimitedBy == "" {
		return "", nil, false
	}
	return best.LimitedBy, best.LimitedByEvidence.At(fmt.Sprintf("the point of %s (%d jobs)", what, best.Jobs)), true
}

// MaxPoint is the point of max IOPS, whose figure and verdict its
// headline shows; nil when there is none (or no test).
func (r *IOCalRandom) MaxPoint() *IOCalPoint {
	if r == nil || r.MaxIOPS == nil {
		return nil
	}
	var best *IOCalPoint
	for i := range r.Points {
		if p := &r.Points[i]; p.IOPS == *r.MaxIOPS && p.LatMs != nil && r.LatencyMsAtMax != nil && p.LatMs.Mean == *r.LatencyMsAtMax {
			best = p
		}
	}
	return best
}

// MaxPoint is the point of max MB/s, whose figure and verdict its
// headline shows; nil when there is none (or no test).
func (s *IOCalSeq) MaxPoint() *IOCalPoint {
	if s == nil {
		return nil
	}
	var best *IOCalPoint
	for i := range s.Points {
		if p := &s.Points[i]; p.MBPS == s.MaxMBPS {
			best = p
		}
	}
	return best
}

// IOCalCommit is the commit sweep over committers (the jobs).
type IOCalCommit struct {
	Points []IOCalPoint `json:"points"`
	// MaxCommitsPS is the highest commits a second of any point; the
	// commit latency of one committer (mean and p99) is the WAL device's
	// write-and-flush latency as the database pays it.
	MaxCommitsPS   float64       `json:"max_commits_ps"`
	LatencyMsAtOne *IOCalLatency `json:"latency_ms_at_one"`
	SaturationJobs *int          `json:"saturation_jobs"`
}

// IOCalLatency is a point's latency in milliseconds.
type IOCalLatency struct {
	Mean float64 `json:"mean"`
	P99  float64 `json:"p99"`
}

// IOCalSeq is a sequential sweep (read or write) over parallel jobs.
type IOCalSeq struct {
	Points         []IOCalPoint `json:"points"`
	MaxMBPS        float64      `json:"max_mbps"`
	SaturationJobs *int         `json:"saturation_jobs"`
}

// AppliedLimits are the cache and storage limits in force for a step, as
// applied (or why not).
type AppliedLimits struct {
	DBCache      string `json:"db_cache,omitempty"`
	OSCacheLimit string `json:"os_cache_limit,omitempty"`
	// MemoryLimitBytes is the server's memory cgroup limit: the database
	// cache, its backends and the page cache its I/O fills.
	MemoryLimitBytes int64             `json:"memory_limit_bytes,omitempty"`
	Cgroup           string            `json:"cgroup,omitempty"`
	CgroupVersion    int               `json:"cgroup_version,omitempty"`
	StorageLimit     map[string]string `json:"storage_limit,omitempty"`
	NotApplied       map[string]string `json:"not_applied,omitempty"`
	ColdStart        bool              `json:"cold_start,omitempty"`
	OSCacheDropped   *bool             `json:"os_cache_dropped,omitempty"`
}
