package results

// KindReplay is a profile replayed through the database (calibra run
// --profile).
const KindReplay = "replay"

func init() {
	RegisterKind(KindReplay, func() any { return &Replay{} })
}

// Replay is a profile's rates driven open-loop through the database on
// the storage under test, at 1x the profile and at multiples of it until
// the latency SLA broke (kind "replay"; docs/profile.md).
type Replay struct {
	Profile ReplayProfile `json:"profile"`
	// DataBytes is the data the replay read from (the profile's size
	// times Scale, at least 64 MiB).
	DataBytes    int64     `json:"data_bytes"`
	Scale        float64   `json:"scale"`
	WindowS      float64   `json:"window_s"` // timed window of each multiple
	WarmupS      float64   `json:"warmup_s"`
	SLA          ReplaySLA `json:"sla"`
	ReadMethod   string    `json:"read_method"`
	CommitMethod string    `json:"commit_method"`
	// Rates holds, per rate, the profile's value, the replay's at 1x and
	// at the headroom, and that as a multiple of the profile's.
	Rates []ReplayRate `json:"rates"`
	// Shape is the profile's shape beside the replay's at 1x.
	Shape []ReplayRate `json:"shape"`
	// Steps are the multiples in the order they ran.
	Steps []ReplayStep `json:"steps"`
	// HeadroomX is the largest multiple of the profile that ran within
	// the SLA; 0 when none did (Verdict says what broke).
	HeadroomX *float64 `json:"headroom_x"`
	Verdict   string   `json:"verdict"`
	// LimitedBy is what limited the first multiple that broke.
	LimitedBy         string            `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence         `json:"limited_by_evidence,omitempty"`
	CannotCapture     []string          `json:"cannot_capture,omitempty"`
	Warnings          []string          `json:"warnings,omitempty"`
	Missing           map[string]string `json:"missing,omitempty"`
}

// ReplayProfile is what the replay drove by.
type ReplayProfile struct {
	File          string  `json:"file"`
	Engine        string  `json:"engine"`
	ServerVersion string  `json:"server_version"`
	CapturedAt    string  `json:"captured_at"`
	DurationS     float64 `json:"duration_s"`
}

// ReplaySLA is the latency bound each multiple is judged by.
type ReplaySLA struct {
	ReadP99Ms   float64 `json:"read_p99_ms"`
	CommitP99Ms float64 `json:"commit_p99_ms"`
}

// ReplayRate is one figure of the profile against the replay.
type ReplayRate struct {
	Name    string   `json:"name"`
	Profile float64  `json:"profile"`
	At1x    *float64 `json:"at_1x"`
	// Ratio1x is At1x / Profile: the replay's fidelity.
	Ratio1x    *float64 `json:"ratio_1x,omitempty"`
	AtHeadroom *float64 `json:"at_headroom,omitempty"`
	// HeadroomX is AtHeadroom / Profile: how many times the profile's rate
	// the storage carried within the SLA.
	HeadroomX *float64 `json:"headroom_x,omitempty"`
}

// ReplayStep is one multiple of the profile over its timed window.
type ReplayStep struct {
	Multiple float64 `json:"multiple"`
	Seconds  float64 `json:"seconds"`
	// Readers and Committers are the connections that drove it.
	Readers    int `json:"readers"`
	Committers int `json:"committers"`
	// Asked are the profile's rates times Multiple.
	AskedPageReadsPS float64 `json:"asked_page_reads_ps"`
	AskedCommitsPS   float64 `json:"asked_commits_ps"`
	// The database's own counters over the window.
	PageReadsPS       float64  `json:"page_reads_ps"`
	PageWritesPS      float64  `json:"page_writes_ps"`
	CommitsPS         float64  `json:"commits_ps"`
	WALBytesPS        float64  `json:"wal_bytes_ps"`
	WALSyncsPS        float64  `json:"wal_syncs_ps"`
	CacheHitPct       *float64 `json:"cache_hit_pct,omitempty"`
	WALBytesPerCommit *float64 `json:"wal_bytes_per_commit,omitempty"`
	Concurrency       float64  `json:"concurrency"`
	// Latencies from each operation's due time (an open loop: a late
	// start counts), reads per block, commits as the server timed them.
	ReadLatMs   *ReplayLatency `json:"read_lat_ms,omitempty"`
	CommitLatMs *ReplayLatency `json:"commit_lat_ms,omitempty"`
	WithinSLA   bool           `json:"within_sla"`
	Broke       string         `json:"broke,omitempty"`
	// The host and device over the window, and calibra's own CPU.
	CPUBusyPct        *float64  `json:"cpu_busy_pct,omitempty"`
	DiskUtilPct       *float64  `json:"disk_util_pct,omitempty"`
	DiskRAwaitMs      *float64  `json:"disk_r_await_ms,omitempty"`
	DiskWAwaitMs      *float64  `json:"disk_w_await_ms,omitempty"`
	DriverCPUPct      float64   `json:"driver_cpu_pct"`
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
}

// ReplayLatency is a latency's median and 99th percentile, in ms.
type ReplayLatency struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}
