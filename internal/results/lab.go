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
	// TornUnit is a torn cut's unit in bytes (0: each write whole or
	// absent at a cut); TornSeed chose the first cut's tears.
	TornUnit int64  `json:"torn_unit,omitempty"`
	TornSeed uint64 `json:"torn_seed,omitempty"`
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
	// checked and gone after recovery (missing): the violation.
	LostAcknowledged int64 `json:"lost_acknowledged"`
	Acknowledged     int64 `json:"acknowledged"`
	// UnverifiableAcknowledged are acknowledged commits that could not be
	// checked, as the database did not come back or could not be read;
	// PresentAcknowledged those checked and found. With the missing ones
	// they add up to Acknowledged.
	UnverifiableAcknowledged int64 `json:"unverifiable_acknowledged"`
	PresentAcknowledged      int64 `json:"present_acknowledged"`
	// CommittedUnacknowledged were in flight at the cut and survived:
	// allowed.
	CommittedUnacknowledged int64    `json:"committed_unacknowledged"`
	RecoveryS               *float64 `json:"recovery_s"` // the slowest successful recovery's
	// PagesDamaged are the damaged pages the page checks found after the
	// recoveries (PageCheck says how they looked), and those a server
	// named when it refused to recover.
	PagesDamaged int64  `json:"pages_damaged"`
	PageCheck    string `json:"page_check,omitempty"`
	// PageProtection is the engine's torn-page protection in the audit
	// (full_page_writes, innodb_doublewrite): "on" unless turned off.
	PageProtection string `json:"page_protection,omitempty"`
	// CutDuring says when the cut came: "checkpoint" when the lab tears
	// writes (the cut comes while the server writes its pages), else
	// "load".
	CutDuring string `json:"cut_during,omitempty"`
	// Matrix is the torn-write matrix (durability --matrix): each page
	// protection setting against each cut; Findings say in a sentence
	// each what it means for this engine on this storage.
	Matrix   []DurabilityCell `json:"matrix,omitempty"`
	Findings []string         `json:"findings,omitempty"`
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
	Cycle        int   `json:"cycle"`
	Acknowledged int64 `json:"acknowledged"`
	// LostAcknowledged were checked and missing, UnverifiableAcknowledged
	// could not be checked, PresentAcknowledged were found (Durability's).
	LostAcknowledged         int64 `json:"lost_acknowledged"`
	UnverifiableAcknowledged int64 `json:"unverifiable_acknowledged"`
	PresentAcknowledged      int64 `json:"present_acknowledged"`
	CommittedUnacknowledged  int64 `json:"committed_unacknowledged"`
	// Outcome is the cycle's class in the power-fault literature's
	// terms (durability.Classes), the worst of what it found.
	Outcome string `json:"outcome"`
	// RecoveryS is the time from the cut to a server that answered;
	// absent when the server did not come back.
	RecoveryS     *float64 `json:"recovery_s,omitempty"`
	Fsck          string   `json:"fsck,omitempty"` // what the file system check said
	RecoveryError string   `json:"recovery_error,omitempty"`
	// Consistency is the TPC-C-like consistency conditions after the
	// recovery (absent when the database did not come back).
	Consistency *Consistency `json:"consistency,omitempty"`
	// Cell is the matrix's combination the cycle ran in ("" outside one).
	Cell string `json:"cell,omitempty"`
	// PagesDamaged counts the damaged pages found after the recovery;
	// DamagedPages names the first of them.
	PagesDamaged int64    `json:"pages_damaged"`
	DamagedPages []string `json:"damaged_pages,omitempty"`
	PageCheck    string   `json:"-"` // Durability.PageCheck
	// WrittenBytes is what the load wrote to the lab's device before the
	// cut: the price of the settings in writes.
	WrittenBytes int64 `json:"written_bytes,omitempty"`
	// Torn is what a torn cut did to the writes in flight (on a lab with
	// torn=): its seed, how many it tore, and the record of each write.
	Torn *TornCut `json:"torn,omitempty"`
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
	// PagesDamaged counts the damaged pages the page check found on the
	// node after the recovery.
	PagesDamaged int64 `json:"pages_damaged"`
	// Rejoined is how the node came back: "bootstrap", "ist" (on its own
	// data, caught up by IST) or "copy of node K" (calibra's copy, when
	// its gap was beyond the donor's write-set cache).
	Rejoined string `json:"rejoined,omitempty"`
	// Differs is where this node's data differ from node 1's ("" when
	// they agree).
	Differs string `json:"differs,omitempty"`
}

// DurabilityCell is one combination of the torn-write matrix: a page
// protection setting against a cut, its cycles and what they found, and
// what its loads wrote to the device.
type DurabilityCell struct {
	Protection       string `json:"protection"` // e.g. full_page_writes=off
	Cut              string `json:"cut"`        // e.g. torn 4 KiB
	TornUnit         int64  `json:"torn_unit"`
	Cycles           int    `json:"cycles"`
	Acknowledged     int64  `json:"acknowledged"`
	LostAcknowledged int64  `json:"lost_acknowledged"`
	// UnverifiableAcknowledged could not be checked (Durability's).
	UnverifiableAcknowledged int64          `json:"unverifiable_acknowledged"`
	PagesDamaged             int64          `json:"pages_damaged"`
	Outcomes                 map[string]int `json:"outcomes,omitempty"`
	WrittenBytes             int64          `json:"written_bytes"`
	// BytesPerCommit is WrittenBytes over the acknowledged commits: the
	// write volume the setting costs.
	BytesPerCommit *float64 `json:"bytes_per_commit,omitempty"`
	Note           string   `json:"note,omitempty"`
}

// TornCut is one torn cut: the writes in flight, those kept in part, the
// seed that chose, and the record (offset, length kept, length lost of
// each write) in the run directory.
type TornCut struct {
	Seed     uint64 `json:"seed"`
	Unit     int64  `json:"unit"`
	InFlight int    `json:"writes_in_flight"`
	Torn     int    `json:"writes_torn"`
	Record   string `json:"record"`
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
