package iocal

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// saturationGain is the growth below which a sweep counts as saturated.
const saturationGain = 0.05

// summarise applies CALIBRATE_IO's rule and the saturation rule to the
// random-read points: max_iops is the highest IOPS among the points whose
// mean latency is at or under the bound; saturation_jobs is the first
// point after which throughput grows by less than 5%. What cannot be
// found is null, with the reason in missing.
func summarise(r *results.IOCalRandom, key string, missing map[string]string) {
	var best *results.IOCalPoint
	for i := range r.Points {
		p := &r.Points[i]
		if p.LatMs == nil || p.LatMs.Mean > r.MaxLatencyMs {
			continue
		}
		if best == nil || p.IOPS > best.IOPS {
			best = p
		}
	}
	switch {
	case best != nil:
		r.MaxIOPS, r.LatencyMsAtMax = ptr(best.IOPS), ptr(best.LatMs.Mean)
		r.DeviceIOPSAtMax = best.DiskRIOPS
		if best.DiskRIOPS == nil {
			missing[key+".device_iops_at_max"] = "the device's counters were not read over the point"
		}
	case len(r.Points) == 0:
		missing[key+".max_iops"] = "no point was measured"
	default:
		missing[key+".max_iops"] = fmt.Sprintf("no point kept its mean latency at or under %g ms", r.MaxLatencyMs)
	}
	rates := make([]float64, len(r.Points))
	for i, p := range r.Points {
		rates[i] = p.IOPS
	}
	if i, ok := saturation(rates); ok {
		r.SaturationJobs = ptr(r.Points[i].Jobs)
	} else if len(r.Points) > 0 {
		missing[key+".saturation_jobs"] = "throughput grew by 5% or more at every step of the sweep: " + moreJobsAdvice(r.Points[len(r.Points)-1])
	}
}

// moreJobsAdvice says whether more jobs could find the storage's
// saturation: not when the last point was already bound by the CPU, by
// calibra itself or by another load, where more jobs measure those.
func moreJobsAdvice(last results.IOCalPoint) string {
	switch last.LimitedBy {
	case verdict.CPU, verdict.Driver, verdict.Host:
		return fmt.Sprintf("but the last point was limited by %s (%s), so more jobs would measure that, not the storage; a machine with more CPU, or a larger --size on slower storage, would", last.LimitedBy, last.LimitedByEvidence.Rule)
	}
	return "add more jobs (--jobs) to find saturation"
}

// saturation is the index of the first point after which the rate grows
// by less than saturationGain.
func saturation(rates []float64) (int, bool) {
	for i := 0; i+1 < len(rates); i++ {
		if rates[i+1] < rates[i]*(1+saturationGain) {
			return i, true
		}
	}
	return 0, false
}

// summariseCommit finds the commit sweep's highest rate, the latency of
// one committer and the saturation.
func summariseCommit(c *results.IOCalCommit, missing map[string]string) {
	rates := make([]float64, len(c.Points))
	for i, p := range c.Points {
		c.MaxCommitsPS = max(c.MaxCommitsPS, p.CommitsPS)
		rates[i] = p.CommitsPS
		if p.Jobs == 1 {
			c.LatencyMsAtOne = p.LatMs
		}
	}
	if c.LatencyMsAtOne == nil {
		missing["commit.latency_ms_at_one"] = "no point had one committer (--jobs)"
	}
	if i, ok := saturation(rates); ok {
		c.SaturationJobs = ptr(c.Points[i].Jobs)
	} else if len(c.Points) > 0 {
		missing["commit.saturation_jobs"] = "throughput grew by 5% or more at every step of the sweep"
	}
}

// summariseSeq finds a sequential sweep's highest MB/s and its saturation.
func summariseSeq(s *results.IOCalSeq, key string, missing map[string]string) {
	rates := make([]float64, len(s.Points))
	for i, p := range s.Points {
		s.MaxMBPS = max(s.MaxMBPS, p.MBPS)
		rates[i] = p.MBPS
	}
	if i, ok := saturation(rates); ok {
		s.SaturationJobs = ptr(s.Points[i].Jobs)
	} else if len(s.Points) > 0 {
		missing[key+".saturation_jobs"] = "throughput grew by 5% or more at every step of the sweep"
	}
}

func ptr[T any](v T) *T { return &v }
