package results

import "time"

// Step kinds of the decision-support layer.
const (
	KindDSSBuild = "dss_build"
	KindDSS      = "dss"
)

func init() {
	RegisterKind(KindDSSBuild, func() any { return &DSSBuild{} })
	RegisterKind(KindDSS, func() any { return &DSS{} })
}

// DSSBuild is a TPC-H-like data build (kind "dss_build").
type DSSBuild struct {
	Workload    string           `json:"workload"`
	ScaleFactor float64          `json:"scale_factor"`
	Generator   string           `json:"generator"` // name and version
	Workers     int              `json:"workers"`   // parallel generator + COPY pipelines
	Rows        map[string]int64 `json:"rows"`
	RowCheck    DSSRowCheck      `json:"row_check"`
	DBBytes     int64            `json:"db_bytes"`
	LoadS       float64          `json:"load_s"`
	IndexS      float64          `json:"index_s"`
	AnalyzeS    float64          `json:"analyze_s"`
	TotalS      float64          `json:"total_s"`
	MBPerS      float64          `json:"mb_per_s"`
}

// DSSRowCheck compares the loaded row counts with the specification's.
type DSSRowCheck struct {
	OK        bool     `json:"ok"`
	Detail    string   `json:"detail,omitempty"`
	Unchecked []string `json:"unchecked,omitempty"` // tables with no published count at this scale factor
}

// DSS is a TPC-H-like power and/or throughput test (kind "dss").
type DSS struct {
	Workload    string            `json:"workload"` // labelled TPC-H-derived
	ScaleFactor float64           `json:"scale_factor"`
	Seed        uint64            `json:"seed"`
	Parallelism map[string]string `json:"parallelism,omitempty"` // the settings in force
	TimeoutS    float64           `json:"query_timeout_s,omitempty"`
	Power       *DSSPower         `json:"power,omitempty"`
	Throughput  *DSSThroughput    `json:"throughput,omitempty"`
	QphH        *float64          `json:"qphh"`
	// Valid is false when the specification defines no result for the
	// run (scale factor below 1, too few streams): its metrics are then
	// indicative, and InvalidReasons says why. Absent in older runs.
	Valid          *bool             `json:"valid,omitempty"`
	InvalidReasons []string          `json:"invalid_reasons,omitempty"`
	Missing        map[string]string `json:"missing,omitempty"`
	Notes          []string          `json:"notes,omitempty"`
}

// DSSQuery is one query's (or refresh function's) run.
type DSSQuery struct {
	Q       string   `json:"q"`       // "1".."22", "RF1", "RF2"
	Seconds *float64 `json:"seconds"` // raw, null when it timed out or failed
	// SecondsRounded is Seconds by clause 5.3.7.5 (nearest 0.1 s, at
	// least 0.1 s): the time Power@Size uses.
	SecondsRounded *float64          `json:"seconds_rounded,omitempty"`
	TimedOut       bool              `json:"timed_out,omitempty"`
	Error          string            `json:"error,omitempty"`
	Rows           int64             `json:"rows,omitempty"`
	Params         map[string]string `json:"params,omitempty"`
	StartS         float64           `json:"start_s,omitempty"` // from the test's start, for timelines
}

// DSSPower is the power test: RF1, stream 0's queries, RF2.
type DSSPower struct {
	Queries     []DSSQuery `json:"queries"`
	Refresh     []DSSQuery `json:"refresh"`
	GeomeanS    *float64   `json:"geomean_s"`
	PowerAtSize *float64   `json:"power_at_size"`
	ElapsedS    float64    `json:"elapsed_s"`
	StartedAt   time.Time  `json:"started_at"`
	FinishedAt  time.Time  `json:"finished_at"`
	Observe     *Observe   `json:"observe,omitempty"` // over this test alone
}

// DSSThroughput is the throughput test: S query streams and a refresh stream.
type DSSThroughput struct {
	Streams          int         `json:"streams"`
	ElapsedS         float64     `json:"elapsed_s"` // raw; Throughput@Size uses it rounded to 0.1 s
	ThroughputAtSize *float64    `json:"throughput_at_size"`
	StreamRuns       []DSSStream `json:"stream_runs"`
	Refresh          []DSSQuery  `json:"refresh"`
	StartedAt        time.Time   `json:"started_at"`
	FinishedAt       time.Time   `json:"finished_at"`
	Observe          *Observe    `json:"observe,omitempty"` // over this test alone
}

// DSSStream is one query stream of the throughput test.
type DSSStream struct {
	Stream   int        `json:"stream"`
	Order    []int      `json:"order"`
	Queries  []DSSQuery `json:"queries"`
	ElapsedS float64    `json:"elapsed_s"`
}
