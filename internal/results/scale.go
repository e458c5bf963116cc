package results

import "fmt"

// KindScale is one load repeated on 1, 2, 4... servers driven together
// (--instances), as the studies plot throughput against nodes.
const KindScale = "scale"

func init() {
	RegisterKind(KindScale, func() any { return &Scale{} })
}

// Scale is the same timed oltp run on a growing number of servers, each a
// timed window of its own (kind "scale").
type Scale struct {
	Workload       string  `json:"workload"`
	Warehouses     int     `json:"warehouses"` // on each server
	Users          int     `json:"users"`      // in all, dealt round-robin
	Mode           string  `json:"mode"`
	Profile        string  `json:"profile,omitempty"`
	KeyingThinking any     `json:"keying_thinking"`
	LatencyBasis   string  `json:"latency_basis"`
	StepRampupS    float64 `json:"step_rampup_s"`
	StepDurationS  float64 `json:"step_duration_s"`

	Points []ScalePoint `json:"points"`
	// MaxNOPM is the highest NOPM of any point.
	MaxNOPM *float64          `json:"max_nopm"`
	Missing map[string]string `json:"missing,omitempty"`
	Notes   []string          `json:"notes,omitempty"`
}

// ScalePoint is the load on one number of servers, over its own window:
// the run's sums and the evidence of its window, as a ramp's load has.
type ScalePoint struct {
	Servers   int      `json:"servers"`
	NOPM      *float64 `json:"nopm"`
	TPMDB     *float64 `json:"tpm_db"`
	TPMClient float64  `json:"tpm_client"`
	ARTMs     float64  `json:"art_ms"`
	P90Ms     float64  `json:"p90_ms"`
	Errors    int64    `json:"errors"`
	LoadEvidence
	LimitedBy         string    `json:"limited_by,omitempty"`
	LimitedByEvidence *Evidence `json:"limited_by_evidence,omitempty"`
}

// HeadlineLimit is what limited the point of the highest NOPM.
func (s *Scale) HeadlineLimit() (string, *Evidence, bool) {
	best := s.MaxPoint()
	if best == nil || best.LimitedBy == "" {
		return "", nil, false
	}
	return best.LimitedBy, best.LimitedByEvidence.At(fmt.Sprintf("the point of the highest NOPM (%d servers)", best.Servers)), true
}

// MaxPoint is the point of the highest NOPM (the first of equals); nil
// when no point has a NOPM.
func (s *Scale) MaxPoint() *ScalePoint {
	var best *ScalePoint
	for i := range s.Points {
		if p := &s.Points[i]; p.NOPM != nil && (best == nil || *p.NOPM > *best.NOPM) {
			best = p
		}
	}
	return best
}
