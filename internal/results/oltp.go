package results

import (
	"maps"
	"slices"
	"time"
)

// Step kinds of the OLTP layer.
const (
	KindOLTPBuild = "oltp_build"
	KindOLTP      = "oltp"
	KindOLTPCheck = "oltp_check"
)

func init() {
	RegisterKind(KindOLTPBuild, func() any { return &OLTPBuild{} })
	RegisterKind(KindOLTP, func() any { return &OLTP{} })
	RegisterKind(KindOLTPCheck, func() any { return &OLTPCheck{} })
}

// Latency percentiles in milliseconds, from an HDR histogram with three
// significant digits; Mean is exact (sum over count).
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// TxStats are one transaction type's figures over the timed window.
type TxStats struct {
	Count     int64   `json:"count"` // completed: commits plus expected rollbacks
	Rollbacks int64   `json:"rollbacks,omitempty"`
	Errors    int64   `json:"errors"`
	LatMs     Latency `json:"lat_ms"`
}

// Check is one consistency condition.
type Check struct {
	ID         string `json:"id"` // the clause, e.g. "3.3.2.1"
	Name       string `json:"name"`
	OK         bool   `json:"ok"`
	Violations int64  `json:"violations"`
	Detail     string `json:"detail,omitempty"`
}

// Consistency is the verdict of a set of consistency checks.
type Consistency struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// OLTP is a timed TPC-C-like run (kind "oltp").
type OLTP struct {
	Workload       string  `json:"workload"`
	Warehouses     int     `json:"warehouses"`
	Users          int     `json:"users"`
	Mode           string  `json:"mode"`
	KeyingThinking any     `json:"keying_thinking"`         // false, or the scale of the spec's times
	RatePerUser    float64 `json:"rate_per_user,omitempty"` // open loop: transactions a second per user
	RampupS        float64 `json:"rampup_s"`
	DurationS      float64 `json:"duration_s"` // the timed window actually measured
	LatencyBasis   string  `json:"latency_basis"`
	// The timed window's edges, as the observers read them.
	WindowStart *time.Time `json:"window_start,omitempty"`
	WindowEnd   *time.Time `json:"window_end,omitempty"`

	NOPM      *float64 `json:"nopm"`
	TPMDB     *float64 `json:"tpm_db"`
	TPMClient float64  `json:"tpm_client"`
	ARTMs     float64  `json:"art_ms"`
	LatMs     *Latency `json:"lat_ms,omitempty"` // all transaction types together
	// Connections, when above 0, is how many connections served the users
	// as terminals (fewer than users); QueueMs is then the time a
	// transaction waited for one, which its latency includes.
	Connections     int      `json:"connections,omitempty"`
	QueueMs         *Latency `json:"queue_ms,omitempty"`
	NewOrderCommits int64    `json:"new_order_commits"`
	EfficiencyPct   *float64 `json:"efficiency_pct,omitempty"`

	// Driver is calibra's own CPU use over the window, so a reader can see
	// that the driver was not what was measured.
	Driver *DriverCPU `json:"driver,omitempty"`

	Transactions map[string]TxStats `json:"transactions"`
	// ErrorClasses counts the window's failed transactions by SQLSTATE
	// ("connection" when the connection broke).
	ErrorClasses map[string]int64 `json:"error_classes,omitempty"`
	// Retries counts the window's retries of a transaction that the
	// session ran again itself, by class (a Galera node's "certification"
	// conflicts); the transaction counts once, its latency spanning them.
	Retries     map[string]int64   `json:"retries,omitempty"`
	MixPct      map[string]float64 `json:"mix_pct"`
	Consistency *Consistency       `json:"consistency,omitempty"`

	// Profile is whose mix and draws ran: "spec" or "hammerdb".
	Profile string `json:"profile,omitempty"`
	// Checks are the measured mix against clause 5.2.3's minimums and the
	// inputs against clause 9.2.2.5's bands, from the driver's counts over
	// the window; Valid is false, with InvalidReasons, when one is outside.
	Checks         []BandCheck `json:"checks,omitempty"`
	Valid          *bool       `json:"valid,omitempty"`
	InvalidReasons []string    `json:"invalid_reasons,omitempty"`
	// Delivery is what the window's Deliveries found (clause 2.7.4.2).
	Delivery *DeliverySkips `json:"delivery,omitempty"`
	// CheckpointsInWindow is the server's checkpoints begun in the
	// window (Δ of its checkpoint counter): a window without one has not
	// measured the storage's steady state.
	CheckpointsInWindow *int64 `json:"checkpoints_in_window,omitempty"`
	// AutovacuumInWindow, where the server counts its autovacuum's
	// transactions with calibra's (PostgreSQL), is autovacuum's work in the
	// window: tables it finished vacuuming or analysing (Δ autovacuum_count
	// + autoanalyze_count) plus its workers busy at either edge.
	AutovacuumInWindow *int64 `json:"autovacuum_in_window,omitempty"`
	// AutovacuumXacts, where the server counts its autovacuum's
	// transactions with calibra's, is those tpm_db left out: 2 for the
	// worker's visit, 1 for each table and 1 for each vacuum or analysis
	// it finished in the window; absent, with a reason, when a worker was
	// at work at an edge (tpm_db then holds what it published).
	AutovacuumXacts *int64 `json:"autovacuum_xacts,omitempty"`
	// Warnings are caveats on the step's figures, each one sentence.
	Warnings []string `json:"warnings,omitempty"`

	// Partition is this process's share of a run split over several
	// (oltp run --partition); Partitions, in a merged run, is every share.
	Partition  *Partition      `json:"partition,omitempty"`
	Partitions []PartitionPart `json:"partitions,omitempty"`
	// Instances are each server's share of a run on several (--instances,
	// a cluster's nodes), in the order users were dealt to them.
	Instances []OLTPInstance `json:"instances,omitempty"`

	// Missing names each metric that could not be measured, with the reason.
	Missing map[string]string `json:"missing,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
}

// Partition is one process's share of a split run: the users whose home
// warehouse w has (w-1) mod Of = Index-1, started at StartAt.
type Partition struct {
	Index          int        `json:"index"` // from 1
	Of             int        `json:"of"`
	StartAt        *time.Time `json:"start_at,omitempty"`
	UsersTotal     int        `json:"users_total"`     // of the whole run
	HomeWarehouses int        `json:"home_warehouses"` // this share's
	// Counters says this process read the database's counters at the
	// window edges (partition 1): its nopm and tpm_db are the whole run's.
	Counters bool `json:"counters"`
	// EdgesHeld says every partition waited at each window edge, through
	// the database, until partition 1 had read the counters there: its
	// counts hold every partition's commits in the window and no other.
	EdgesHeld bool `json:"edges_held,omitempty"`
	// OwnXacts is what calibra's own sessions in a partition other than
	// the first committed inside the held window (its pass of the start
	// edge, its users' statistics flushes at the end): partition 1's
	// tpm_db counts them, and the merge takes them out.
	OwnXacts int64 `json:"own_xacts,omitempty"`
}

// PartitionPart is one partition of a merged run, as its own run directory
// recorded it.
type PartitionPart struct {
	Partition
	Dir             string  `json:"dir"`
	Host            string  `json:"host"`
	Users           int     `json:"users"`
	TPMClient       float64 `json:"tpm_client"`
	NewOrderCommits int64   `json:"new_order_commits"`
	ARTMs           float64 `json:"art_ms"`
	DurationS       float64 `json:"duration_s"`
}

// OLTPBuild is a schema build (kind "oltp_build").
type OLTPBuild struct {
	Workload   string           `json:"workload"`
	Warehouses int              `json:"warehouses"`
	Seed       uint64           `json:"seed"`
	Workers    int              `json:"workers"`
	Rows       map[string]int64 `json:"rows"`
	DBBytes    int64            `json:"db_bytes"`
	LoadS      float64          `json:"load_s"`
	IndexS     float64          `json:"index_s"`
	VacuumS    float64          `json:"vacuum_s"`
	TotalS     float64          `json:"total_s"`
	MBPerS     float64          `json:"mb_per_s"` // db_bytes / total_s, in 10^6 bytes
	Template   string           `json:"template,omitempty"`
	// Instances counts the independent instances built alike, each with
	// Warehouses; rows, sizes and times are their sums.
	Instances int `json:"instances,omitempty"`
	// Implicit marks a build a run made because it found no schema;
	// TemplateKept says why the build did not replace the loaded template.
	Implicit     bool         `json:"implicit,omitempty"`
	TemplateKept string       `json:"template_kept,omitempty"`
	Consistency  *Consistency `json:"consistency,omitempty"`
}

// OLTPInstance is one server's share of a run on several: the users dealt
// to it, its own database counters over the window (NOPM only where it
// holds its own data; a shared database's orders are counted once, for the
// run) and its users' client-side rate and mean latency.
type OLTPInstance struct {
	Instance  int      `json:"instance"` // from 1
	Users     int      `json:"users"`
	NOPM      *float64 `json:"nopm,omitempty"`
	TPMDB     *float64 `json:"tpm_db,omitempty"`
	TPMClient float64  `json:"tpm_client"`
	ARTMs     float64  `json:"art_ms"`
}

// OLTPCheck is an on-demand consistency check (kind "oltp_check").
type OLTPCheck struct {
	Warehouses  int          `json:"warehouses"`
	Consistency *Consistency `json:"consistency"`
}

// DriverCPU is the driver process's CPU time (getrusage, user + system)
// over the timed window.
type DriverCPU struct {
	CPUS float64 `json:"cpu_s"`
	// Model is how the users ran: "polling" (one thread polling every
	// user's socket) or "goroutines" (a goroutine a user).
	Model string `json:"model,omitempty"`
	// Threads is the polling driver's threads, each polling its share of
	// the users' sockets (RunConfig.DriverThreads); 0 with goroutines.
	Threads int `json:"threads,omitempty"`
	// Reason is why the users ran a goroutine each where the mode runs on
	// the polling driver on other connections (a session that retries its
	// transactions itself).
	Reason      string  `json:"reason,omitempty"`
	CPUUsPerTxn float64 `json:"cpu_us_per_txn"`
	// PollingCPUUsPerTxn is the polling threads' own CPU (RUSAGE_THREAD)
	// from their sight of the window's start to its end, a transaction:
	// the load generator alone, without the collector, the observers and
	// Go's runtime that CPUUsPerTxn includes; absent with goroutines.
	PollingCPUUsPerTxn float64 `json:"polling_cpu_us_per_txn,omitempty"`
	// TxnPerWakeup is the transactions completed for each return of the
	// polling threads from epoll_wait over the window, and
	// PollingCPUUsPerWakeup their CPU a return: a thread's cost goes with
	// its wake-ups, so the cost a transaction falls as answers come
	// several a wake-up (a faster server, more users); absent with
	// goroutines.
	TxnPerWakeup          float64 `json:"txn_per_wakeup,omitempty"`
	PollingCPUUsPerWakeup float64 `json:"polling_cpu_us_per_wakeup,omitempty"`
	MachineSharePct       float64 `json:"machine_share_pct"` // of all CPUs over the window
	// MemPerUserKB is the Go heap the users and their connections took
	// when connected, per user (terminal).
	MemPerUserKB float64 `json:"mem_per_user_kb,omitempty"`
	// StartLagMs is how late transactions started against their intended
	// starts (keying's end, an open loop's schedule), waits for a pooled
	// connection included: the schedule lag; nil when not paced.
	StartLagMs *Latency `json:"start_lag_ms,omitempty"`
}

// BandCheck is one measured share against the range a valid run keeps it
// in: the specification's range widened by the sampling tolerance of the
// window's count (Low and High are what the run was judged on).
type BandCheck struct {
	Name   string  `json:"name"`   // e.g. "mix.payment", "new_order.remote_lines"
	Clause string  `json:"clause"` // "5.2.3", "9.2.2.5"
	Pct    float64 `json:"pct"`    // measured share, percent
	Count  int64   `json:"count"`
	Of     int64   `json:"of"`
	Target string  `json:"target"` // the specification's, e.g. ">= 43%", "1% (0.95-1.05%)"
	LowPct float64 `json:"low_pct"`
	// HighPct is 0 for a minimum with no upper bound.
	HighPct float64 `json:"high_pct,omitempty"`
	OK      bool    `json:"ok"`
	Note    string  `json:"note,omitempty"`
}

// DeliverySkips counts the districts the window's Deliveries found with no
// undelivered order (clause 2.7.4.2: reported, flagged above 1%).
type DeliverySkips struct {
	Deliveries       int64   `json:"deliveries"`
	SkippedDistricts int64   `json:"skipped_districts"`
	SkippedPct       float64 `json:"skipped_pct"` // of the districts the Deliveries processed
}

// Retried is the window's retries, by class in name order ("12
// certification"), their number and the attempts they were part of
// (every transaction, failed ones included, and every retry); n is 0 when
// no session ran a transaction again.
func (o *OLTP) Retried() (classes []ClassCount, n, attempts int64) {
	for _, c := range slices.Sorted(maps.Keys(o.Retries)) {
		if o.Retries[c] > 0 {
			n += o.Retries[c]
			classes = append(classes, ClassCount{c, o.Retries[c]})
		}
	}
	attempts = n
	for _, t := range o.Transactions {
		attempts += t.Count + t.Errors
	}
	return classes, n, attempts
}

// ClassCount is a count of one class (of errors, of retries).
type ClassCount struct {
	Class string
	Count int64
}
