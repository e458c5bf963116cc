package results

import "fmt"

// KindRamp is a user ramp to a response-time SLA (Benchmark Factory style).
const KindRamp = "ramp"

func init() {
	RegisterKind(KindRamp, func() any { return &Ramp{} })
}

// Ramp is a ramp of rising user loads, each a timed window (kind "ramp").
type Ramp struct {
	Workload       string  `json:"workload"`
	Warehouses     int     `json:"warehouses"`
	Mode           string  `json:"mode"`
	Profile        string  `json:"profile,omitempty"` // "spec" or "hammerdb"
	KeyingThinking any     `json:"keying_thinking"`
	Loop           string  `json:"loop"`                    // "closed" or "open"
	RatePerUser    float64 `json:"rate_per_user,omitempty"` // open loop: transactions a second per user
	LatencyBasis   string  `json:"latency_basis"`
	SLAMs          float64 `json:"sla_ms"`
	SLAMetric      string  `json:"sla_metric"` // "art" or "p90"
	StepRampupS    float64 `json:"step_rampup_s"`
	StepDurationS  float64 `json:"step_duration_s"`

	Steps             []RampStep `json:"steps"`
	MaxTPS            *float64   `json:"max_tps"`
	MaxUsersWithinSLA *int       `json:"max_users_within_sla"`
	// SLAReached says whether any load broke the SLA: when none did, the
	// highest load tried is only a lower bound of the users within it.
	SLAReached *bool `json:"sla_reached,omitempty"`
	// ARTAtLoad is the ART at a named user load (the study's "ART at N users").
	ARTAtUsers *int              `json:"art_at_users,omitempty"`
	ARTAtMs    *float64          `json:"art_at_ms,omitempty"`
	StopReason string            `json:"stop_reason"`
	Missing    map[string]string `json:"missing,omitempty"`
	Notes      []string          `json:"notes,omitempty"`
}

// RampStep is one user load of a ramp, over its own timed window.
type RampStep struct {
	Users int      `json:"users"`
	TPS   float64  `json:"tps"`
	NOPM  *float64 `json:"nopm"`
	ARTMs float64  `json:"art_ms"`
	P90Ms float64  `json:"p90_ms"`
	LoadEvidence
	// LimitedBy is what bounded this load (internal/verdict).
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
	// LittleUsers is throughput x (response + think time): Little's law's
	// count of users, to compare with Users.
	LittleUsers *float64 `json:"little_users,omitempty"`
	WithinSLA   bool     `json:"within_sla"`
	Errors      int64    `json:"errors"`
}

// LoadEvidence is what the host, the storage and the database did over
// one load's window.
type LoadEvidence struct {
	CPUBusyPct *float64 `json:"cpu_busy_pct"`
	IOWaitPct  *float64 `json:"iowait_pct"`
	// The storage's and the database's latencies over the load's window
	// (002 Figs 6-7, 004 Figs 1-4): the device's await, the mean
	// data-file read and the mean WAL sync; absent when not measured.
	DiskAwaitMs       *float64 `json:"disk_await_ms,omitempty"`
	DataFileReadAvgMs *float64 `json:"data_file_read_avg_ms,omitempty"`
	WALSyncAvgMs      *float64 `json:"wal_sync_avg_ms,omitempty"`
	// DeviceShare is the load's device I/O against the run's device step.
	DeviceShare *DeviceShare `json:"device_share,omitempty"`
}

// Observed takes the load's CPU, I/O wait, latencies and device share
// from the observations of its window.
func (s *LoadEvidence) Observed(o *Observe) {
	s.CPUBusyPct, s.IOWaitPct, s.DeviceShare = o.CPUBusyPct, o.CPUIOWaitPct, o.DeviceShare
	if o.Disk != nil {
		s.DiskAwaitMs = o.Disk.AwaitMs
	}
	if o.DB != nil {
		s.DataFileReadAvgMs, s.WALSyncAvgMs = o.DB.DataFileReadAvgMs, o.DB.WALSyncAvgMs
	}
}

// HeadlineLimit is what limited the load of the highest TPS, the ramp's
// headline; ok is false when that load has no verdict.
func (r *Ramp) HeadlineLimit() (string, *Evidence, bool) {
	best := r.MaxStep()
	if best == nil || best.LimitedBy == "" {
		return "", nil, false
	}
	return best.LimitedBy, best.LimitedByEvidence.At(fmt.Sprintf("the load of the highest TPS (%d users)", best.Users)), true
}

// MaxStep is the load of the highest TPS (the first of equals); nil
// without any.
func (r *Ramp) MaxStep() *RampStep {
	var best *RampStep
	for i := range r.Steps {
		if s := &r.Steps[i]; best == nil || s.TPS > best.TPS {
			best = s
		}
	}
	return best
}

// StepAt is the load of users users; nil when the ramp had none (users
// nil, or no such load).
func (r *Ramp) StepAt(users *int) *RampStep {
	for i := range r.Steps {
		if users != nil && r.Steps[i].Users == *users {
			return &r.Steps[i]
		}
	}
	return nil
}

// UsersWithinSLA is max_users_within_sla as a person reads it: "≥ 8 (SLA
// not reached)" when no load broke the SLA, "n/a" when it is unknown.
func (r *Ramp) UsersWithinSLA() string {
	switch {
	case r.MaxUsersWithinSLA == nil:
		return "n/a"
	case r.SLAReached != nil && !*r.SLAReached:
		return fmt.Sprintf("≥ %d (SLA not reached)", *r.MaxUsersWithinSLA)
	}
	return fmt.Sprint(*r.MaxUsersWithinSLA)
}

// stopReasons say in words why a ramp stopped.
var stopReasons = map[string]string{
	"sla":             "a load broke the SLA",
	"throughput_fell": "throughput fell below the best load's",
	"behind_schedule": "the offered rate was not achieved (open loop)",
	"last_load":       "the last load was reached within the SLA",
	"error":           "a load failed",
	"interrupted":     "interrupted",
}

// StopReasonText is the stop reason in words.
func (r *Ramp) StopReasonText() string {
	if w, ok := stopReasons[r.StopReason]; ok {
		return w
	}
	return r.StopReason
}
