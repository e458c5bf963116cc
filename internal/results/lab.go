package results

// KindDurability is the power-loss audit (calibra durability).
const KindDurability = "durability"

func init() {
	RegisterKind(KindDurability, func() any { return &Durability{} })
}

// Lab is an emulated storage stack calibra built for the run (calibra
// lab): the file system on a loop device over a file served by nbdkit,
// whose filters emulate the tier.
type Lab struct {
	Spec       string `json:"spec"` // as asked, e.g. "hdd+flash-cache"
	FS         string `json:"fs"`
	SizeBytes  int64  `json:"size_bytes"`
	ReadDelay  string `json:"read_delay,omitempty"` // nbdkit delay filter, e.g. "8ms"
	WriteDelay string `json:"write_delay,omitempty"`
	Rate       string `json:"rate,omitempty"`       // nbdkit rate filter, bits a second
	ErrorRate  string `json:"error_rate,omitempty"` // nbdkit error filter
	// Cache is the volatile write-back cache in front of the platter
	// ("writeback", honouring FLUSH; "unsafe", ignoring it) or "" for
	// none; CacheDir holds it.
	Cache       string `json:"cache,omitempty"`
	CacheOnRead bool   `json:"cache_on_read,omitempty"`
	CacheDir    string `json:"cache_dir,omitempty"`
	ReadIOPS    int64  `json:"read_iops,omitempty"` // blkio throttle on the loop device
	WriteIOPS   int64  `json:"write_iops,omitempty"`
	Chain       string `json:"chain"` // the stack, top to bottom, in words
}

// Durability is a power-loss audit: cycles of load, power cut and
// recovery, counting acknowledged commits that did not survive.
type Durability struct {
	// PowerCut says what a cut kills: "server+cache" on a lab stack,
	// "server" without one (which does not test the device).
	PowerCut    string  `json:"power_cut"`
	Calibration bool    `json:"calibration"` // commits not flushed (UnsafeSettings): the run must show losses
	Clients     int     `json:"clients"`
	LoadS       float64 `json:"load_s"`
	Cycles      int     `json:"cycles"` // completed cycles
	// LostAcknowledged are commits the client saw succeed that were
	// gone after recovery: the violation.
	LostAcknowledged int64 `json:"lost_acknowledged"`
	Acknowledged     int64 `json:"acknowledged"`
	// CommittedUnacknowledged were in flight at the cut and survived:
	// allowed.
	CommittedUnacknowledged int64    `json:"committed_unacknowledged"`
	RecoveryS               *float64 `json:"recovery_s"` // the slowest successful recovery's
	// Outcomes counts the cycles of each outcome class
	// (durability.Classes): durable, in-flight, lost-acknowledged,
	// corrupt, files-gone, no-restart.
	Outcomes map[string]int `json:"outcomes,omitempty"`
	// UnsafeSettings are the calibration's settings that acknowledge
	// commits before they are durable (fsync=off...).
	UnsafeSettings string            `json:"unsafe_settings,omitempty"`
	PerCycle       []DurabilityCycle `json:"per_cycle"`
	Flush          *FlushProbe       `json:"flush_probe,omitempty"`
	Journal        string            `json:"journal"` // the acknowledgements, in the run directory
	Note           string            `json:"note,omitempty"`
	Missing        map[string]string `json:"missing,omitempty"`
}

// DurabilityCycle is one load, cut and recovery.
type DurabilityCycle struct {
	Cycle                   int   `json:"cycle"`
	Acknowledged            int64 `json:"acknowledged"`
	LostAcknowledged        int64 `json:"lost_acknowledged"`
	CommittedUnacknowledged int64 `json:"committed_unacknowledged"`
	// Outcome is the cycle's class in the power-fault literature's
	// terms (durability.Classes), the worst of what it found.
	Outcome string `json:"outcome"`
	// RecoveryS is the time from the cut to a server that answered;
	// absent when the recovery failed.
	RecoveryS     *float64 `json:"recovery_s,omitempty"`
	Fsck          string   `json:"fsck,omitempty"` // what the file system check said
	RecoveryError string   `json:"recovery_error,omitempty"`
	// Consistency is the TPC-C-like consistency conditions after the
	// recovery (absent when the database did not come back).
	Consistency *Consistency `json:"consistency,omitempty"`
	// Nodes are each node's figures on a cluster whose nodes serve one
	// database (--galera); the cycle's are the worst node's, and its
	// consistency holds the check that every node holds node 1's data.
	Nodes []DurabilityNode `json:"nodes,omitempty"`
}

// DurabilityNode is one cluster node's check after a recovery.
type DurabilityNode struct {
	Node                    int   `json:"node"`
	LostAcknowledged        int64 `json:"lost_acknowledged"`
	CommittedUnacknowledged int64 `json:"committed_unacknowledged"`
	ConsistencyOK           bool  `json:"consistency_ok"`
	// Rejoined is how the node came back: "bootstrap", "ist" (on its own
	// data, caught up by IST) or "copy of node K" (calibra's copy, when
	// its gap was beyond the donor's write-set cache).
	Rejoined string `json:"rejoined,omitempty"`
	// Differs is where this node's data differ from node 1's ("" when
	// they agree).
	Differs string `json:"differs,omitempty"`
}

// FlushProbe is the rate of small write+fdatasync pairs at queue depth 1
// on the storage under test, against what the device says it is.
type FlushProbe struct {
	FsyncsPerS    float64 `json:"fsyncs_per_s"`
	LatencyMsMean float64 `json:"latency_ms_mean"`
	Device        string  `json:"device,omitempty"`
	Rotational    *bool   `json:"rotational,omitempty"`
	WriteCache    string  `json:"write_cache,omitempty"` // /sys/block/DEV/queue/write_cache
	VolatileCache bool    `json:"volatile_cache_suspected"`
	Verdict       string  `json:"verdict"`
}
