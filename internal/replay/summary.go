package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/profile"
	"github.com/calibra-bench/calibra/internal/results"
)

// summarise sets each rate of the profile beside the replay's at 1x and
// at the headroom, and the verdict.
func summarise(out *results.Replay, p *profile.Profile) {
	var at1, head, broke *results.ReplayStep
	for i := range out.Steps {
		st := &out.Steps[i]
		if st.Multiple == 1 {
			at1 = st
		}
		if st.WithinSLA && (head == nil || st.Multiple > head.Multiple) {
			head = st
		}
		if !st.WithinSLA && (broke == nil || st.Multiple < broke.Multiple) {
			broke = st
		}
	}
	rate := func(name string, prof float64, of func(*results.ReplayStep) *float64) results.ReplayRate {
		rr := results.ReplayRate{Name: name, Profile: prof}
		if at1 != nil {
			rr.At1x = of(at1)
			if rr.At1x != nil && prof > 0 {
				rr.Ratio1x = ptr(results.Round(*rr.At1x/prof, 3))
			}
		}
		if head != nil {
			rr.AtHeadroom = of(head)
			if rr.AtHeadroom != nil && prof > 0 {
				rr.HeadroomX = ptr(results.Round(*rr.AtHeadroom/prof, 3))
			}
		}
		return rr
	}
	out.Rates = []results.ReplayRate{
		rate("page_reads_ps", p.Rates.PageReadsPS, func(s *results.ReplayStep) *float64 { return ptr(s.PageReadsPS) }),
		rate("commits_ps", p.Rates.CommitsPS, func(s *results.ReplayStep) *float64 { return ptr(s.CommitsPS) }),
		rate("wal_bytes_ps", float64(p.Rates.WALBytesPS), func(s *results.ReplayStep) *float64 { return ptr(s.WALBytesPS) }),
		rate("page_writes_ps", p.Rates.PageWritesPS, func(s *results.ReplayStep) *float64 { return ptr(s.PageWritesPS) }),
		rate("wal_syncs_ps", p.Rates.WALSyncsPS, func(s *results.ReplayStep) *float64 { return ptr(s.WALSyncsPS) }),
	}
	shape := func(name string, prof float64, of func(*results.ReplayStep) *float64) results.ReplayRate {
		rr := rate(name, prof, of)
		rr.AtHeadroom, rr.HeadroomX = nil, nil
		return rr
	}
	out.Shape = []results.ReplayRate{
		shape("cache_hit_pct", p.Shape.CacheHitPct, func(s *results.ReplayStep) *float64 { return s.CacheHitPct }),
		shape("wal_bytes_per_commit", p.Shape.WALBytesPerCommit, func(s *results.ReplayStep) *float64 { return s.WALBytesPerCommit }),
		shape("concurrency", p.Shape.Concurrency, func(s *results.ReplayStep) *float64 { return ptr(s.Concurrency) }),
	}
	if at1 == nil {
		return
	}
	h := 0.0
	if head != nil {
		h = head.Multiple
	}
	out.HeadroomX = &h
	if broke != nil {
		out.LimitedBy, out.LimitedByEvidence = broke.LimitedBy, broke.LimitedByEvidence
	}
	out.Verdict = verdictLine(h, broke, out.Steps)
}

func verdictLine(h float64, broke *results.ReplayStep, steps []results.ReplayStep) string {
	why := ""
	if broke != nil {
		why = fmt.Sprintf("%gx broke the SLA: %s", broke.Multiple, broke.Broke)
		if broke.LimitedBy != "" {
			why += fmt.Sprintf(" (limited by %s)", broke.LimitedBy)
		}
	}
	switch {
	case h >= 1 && broke == nil:
		return fmt.Sprintf("headroom at least %gx: every multiple asked, up to %gx, held the SLA", h, steps[len(steps)-1].Multiple)
	case h >= 1:
		return fmt.Sprintf("headroom %gx: the storage carried %gx the profile within the SLA; %s", h, h, why)
	case h > 0:
		return fmt.Sprintf("not even 1x: headroom %gx; %s", h, why)
	}
	return fmt.Sprintf("not even 1x, nor %gx: %s", steps[len(steps)-1].Multiple, why)
}

func scaleWords(scale float64) string {
	if scale == 1 {
		return ""
	}
	return fmt.Sprintf(" times %g", scale)
}

func joinWords(parts []string) string { return strings.Join(parts, "; ") }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ptr[T any](v T) *T { return &v }
