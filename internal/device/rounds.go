package device

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// pointRuns is what one run of the sweep measured: fio's reports (with
// steady state, the window's rounds), every fio run's name, the steady-state
// judgement, and IOPS per second over all its fio runs in order.
type pointRuns struct {
	reps      []*Report
	names     []string
	steady    *results.DeviceSteady
	intervals IntervalIOPS
	host      []HostSecond // the host's CPU each logged second; nil without observers
	logErr    error        // the IOPS logs could not be read
}

// runPoint does one run of the sweep. Fresh out of box it is one fio run.
// Held to steady state it is rounds of the run's spec and depth, each a
// fio run of cfg.Runtime (the first after cfg.Ramp), until the last
// SteadyWindow rounds hold the PTS criteria or cfg.MaxRounds are done; the
// reports kept are the window judged.
func (cfg Config) runPoint(ctx context.Context, env Env, r Run, status func(string)) (pointRuns, error) {
	var pr pointRuns
	var iops []float64
	var s Steady
	rounds := 1
	if cfg.SteadyState {
		rounds = cfg.MaxRounds
	}
	for round := 1; round <= rounds; round++ {
		name, job := r.Name(), cfg.job(r)
		if cfg.SteadyState {
			status(fmt.Sprintf("round %d of at most %d", round, cfg.MaxRounds))
			name = fmt.Sprintf("%s-round%02d", r.Name(), round)
			job.Title = fmt.Sprintf("calibra device: %s at queue depth %d, run %d, steady-state round %d", r.Spec.Name, r.QD, r.Index+1, round)
			job.Seed = cfg.Seed + uint64(r.Index)<<16 + uint64(round)
			if round > 1 {
				job.Ramp = 0 // the rounds run back to back: the first ramp warmed up
			}
		}
		job.IOPSLog = name
		began := time.Now()
		rep, err := cfg.Fio.run(ctx, env, name, job)
		if err != nil {
			return pr, err
		}
		pr.reps, pr.names = append(pr.reps, rep), append(pr.names, name)
		iv, err := readIOPSLogs(env.RawDir, name)
		if err != nil && pr.logErr == nil {
			pr.logErr = err
		}
		pr.intervals.Append(iv)
		// fio logs from the end of its ramp; its start-up of a fraction of
		// a second is not known and shifts these seconds by that much.
		pr.host = append(pr.host, env.hostSeconds(began.Add(job.Ramp), len(iv.All))...)
		iops = append(iops, rep.Read.IOPS+rep.Write.IOPS)
		if s = JudgeSteady(iops); s.Reached {
			break
		}
	}
	if !cfg.SteadyState {
		return pr, nil
	}
	if s.Round == 0 { // fewer rounds than a window: judge what there is
		s = judgeWindow(iops, len(iops))
		s.Reached = false
	}
	pr.reps = pr.reps[max(s.Round-SteadyWindow, 0):s.Round]
	pr.steady = steadyResult(s, iops)
	return pr, nil
}

// burstResult is where a run's rate fell, as results.json holds it: nil
// when it did not, hostLimited when the host rule says another load took
// the CPU; bs converts the writes before the fall to bytes.
func burstResult(pr pointRuns, bs int64) (fall *results.DeviceBurst, hostLimited bool) {
	iv := pr.intervals
	b := DetectBurst(iv.All)
	if !b.Found {
		return nil, false
	}
	var written float64
	for _, w := range iv.Writes[:b.FellAt] {
		written += w * float64(bs) // a second's IOPS x a block
	}
	fall = &results.DeviceBurst{FellAtS: b.FellAt, PeakIOPS: round(b.PeakIOPS, 2), SettledIOPS: round(b.SettledIOPS, 2),
		DropPct: round(b.DropPct, 2), WrittenBytesBeforeFall: int64(written), Raw: pr.names[0]}
	if h, ok := JudgeFallHost(b, pr.host); ok {
		fall.Host = &results.DeviceFallHost{BusyPctBefore: round(h.BusyBefore, 1), BusyPctAfter: round(h.BusyAfter, 1),
			OutsidePctBefore: round(h.OutsideBefore, 1), OutsidePctAfter: round(h.OutsideAfter, 1),
			AwaitMsBefore: finite(h.AwaitBefore), AwaitMsAfter: finite(h.AwaitAfter)}
		hostLimited = h.Limited
	}
	return fall, hostLimited
}

// hostSeconds is the host's CPU in each of n seconds from start, nil
// without observers.
func (env Env) hostSeconds(start time.Time, n int) []HostSecond {
	if env.Window == nil {
		return nil
	}
	known := func(v *float64) float64 {
		if v == nil {
			return math.NaN()
		}
		return *v
	}
	out := make([]HostSecond, n)
	for i := range out {
		from := start.Add(time.Duration(i) * time.Second)
		o := env.Window(from, from.Add(time.Second))
		out[i] = HostSecond{BusyPct: known(o.CPUBusyPct), OutsidePct: known(o.CPUOutsidePct), AwaitMs: math.NaN()}
		if o.Disk != nil {
			out[i].AwaitMs = known(o.Disk.AwaitMs)
		}
	}
	return out
}

// steadyResult is a judgement as results.json holds it.
func steadyResult(s Steady, iops []float64) *results.DeviceSteady {
	out := &results.DeviceSteady{Reached: s.Reached, Round: s.Round, RangePct: finite(s.RangePct), SlopePct: finite(s.SlopePct),
		WindowMeanIOPS: round(s.Mean, 2), FitSlope: round(s.Slope, 3), FitIntercept: round(s.Intercept, 2)}
	for _, v := range iops {
		out.RoundsIOPS = append(out.RoundsIOPS, round(v, 2))
	}
	return out
}

// finite is v to 3 places, nil when it is NaN or infinite.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = round(v, 3)
	return &v
}

// steadyMethod is the sweep's steady-state method for results.json.
func (cfg Config) steadyMethod() *results.DeviceSteadyMethod {
	if !cfg.SteadyState {
		return nil
	}
	m := &results.DeviceSteadyMethod{PreconditionPasses: preconditionPasses, PreconditionBlock: cfg.preconditionBlock(),
		RoundS: cfg.Runtime.Seconds(), MaxRounds: cfg.MaxRounds, WindowRounds: SteadyWindow,
		RangeLimitPct: SteadyRangeLimitPct, SlopeLimitPct: SteadySlopeLimitPct}
	for _, t := range cfg.Targets {
		if t.writable() {
			m.PreconditionBytes = preconditionPasses * cfg.Size
		}
	}
	return m
}

// preconditionBlock is 128 KiB, or the largest block under it that divides
// the region (a region is whole 4 KiB pages).
func (cfg Config) preconditionBlock() int64 {
	return max(gcd(cfg.Size, preconditionBlock), preconditionMinBlock)
}

// roundsBudget is the longest a run can take: its ramp and every round.
func (cfg Config) roundsBudget() time.Duration {
	if !cfg.SteadyState {
		return cfg.Ramp + cfg.Runtime
	}
	return cfg.Ramp + time.Duration(cfg.MaxRounds)*cfg.Runtime
}
