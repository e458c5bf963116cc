package oltp

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// SLA metrics a ramp can be held to.
const (
	SLAART = "art" // mean response time of the step's window
	SLAP90 = "p90" // 90th percentile of all transactions of the window
)

// RampConfig is a ramp of user loads, Benchmark Factory style: each load
// a timed run with its own warm-up, until the SLA breaks or throughput
// stops growing.
type RampConfig struct {
	Run          RunConfig // Users is set per step; Rampup and Duration are each step's
	From, To, By int
	SLA          time.Duration
	SLAMetric    string
	ARTAtUsers   int     // report the ART at this load (0: none)
	FallPct      float64 // stop when TPS falls this far below the best so far
	MinSteps     int     // loads run before a throughput fall may stop the ramp
	OnStep       func(*results.OLTP, *Record)
}

// Loads lists the ramp's user loads.
func (c RampConfig) Loads() []int {
	var loads []int
	for u := c.From; u <= c.To && c.By > 0; u += c.By {
		loads = append(loads, u)
	}
	return loads
}

// Stop reasons of a ramp.
const (
	StopSLA         = "sla"             // the SLA metric passed the SLA
	StopFell        = "throughput_fell" // TPS fell below the best so far
	StopBehind      = "behind_schedule" // open loop: achieved TPS fell short of the offered rate
	StopLastLoad    = "last_load"       // every load ran within the SLA
	StopError       = "error"
	StopInterrupted = "interrupted"
)

// Ramp runs the loads in turn on the built schema and judges each against
// the SLA. Each load's own oltp result goes to OnStep, so its timeline and
// histograms are kept like a timed run's.
func Ramp(ctx context.Context, e engine.Engine, cfg RampConfig, prog *progress.Printer) (*results.Ramp, error) {
	out := &results.Ramp{Workload: Workload, Mode: string(cfg.Run.Mode), Profile: string(cmp.Or(cfg.Run.Profile, ProfileSpec)), KeyingThinking: false, Loop: "closed",
		LatencyBasis: "service", SLAMs: ms(cfg.SLA), SLAMetric: cfg.SLAMetric,
		StepRampupS: cfg.Run.Rampup.Seconds(), StepDurationS: cfg.Run.Duration.Seconds(), Missing: map[string]string{}}
	if cfg.Run.KeyingThinking > 0 {
		out.KeyingThinking = cfg.Run.KeyingThinking
		out.LatencyBasis = "response"
	}
	if cfg.Run.RatePerUser > 0 {
		out.Loop = "open"
		out.RatePerUser = cfg.Run.RatePerUser
		out.LatencyBasis = "response"
	}
	if cfg.ARTAtUsers > 0 {
		u := cfg.ARTAtUsers
		out.ARTAtUsers = &u
	}
	loads := cfg.Loads()
	var best float64
	var err error
	out.StopReason = StopLastLoad
	for i, users := range loads {
		prog.Phase("oltp ramp: load %d of %d, %d users", i+1, len(loads), users)
		rc := cfg.Run
		rc.Users = users
		var o *results.OLTP
		var rec *Record
		o, rec, err = Run(ctx, e, rc, prog)
		if o != nil && cfg.OnStep != nil {
			cfg.OnStep(o, rec)
		}
		if err != nil || o == nil || o.LatMs == nil {
			out.StopReason = StopError
			if ctx.Err() != nil {
				out.StopReason = StopInterrupted
			}
			if err == nil {
				err = fmt.Errorf("the load of %d users completed no transaction in its window", users)
			}
			break
		}
		if out.Warehouses == 0 {
			out.Warehouses = o.Warehouses
		}
		st := rampStep(o, cfg)
		out.Steps = append(out.Steps, st)
		prog.Phase("oltp ramp: %d users: %.1f TPS, ART %.2f ms, p90 %.2f ms (%s)", users, st.TPS, st.ARTMs, st.P90Ms, withinWord(st.WithinSLA))
		if !st.WithinSLA {
			out.StopReason = StopSLA
			break
		}
		if cfg.Run.RatePerUser > 0 && st.TPS < (1-cfg.FallPct/100)*float64(users)*cfg.Run.RatePerUser {
			out.StopReason = StopBehind
			break
		}
		if i+1 >= cfg.MinSteps && best > 0 && st.TPS < (1-cfg.FallPct/100)*best {
			out.StopReason = StopFell
			break
		}
		best = max(best, st.TPS)
	}
	judge(out, cfg)
	return out, err
}

// rampStep reads one load's figures from its timed run.
func rampStep(o *results.OLTP, cfg RampConfig) results.RampStep {
	st := results.RampStep{Users: o.Users, TPS: results.Round(o.TPMClient/60, 2), NOPM: o.NOPM, ARTMs: o.ARTMs, P90Ms: o.LatMs.P90}
	for _, tx := range o.Transactions {
		st.Errors += tx.Errors
	}
	metric := st.ARTMs
	if cfg.SLAMetric == SLAP90 {
		metric = st.P90Ms
	}
	st.WithinSLA = metric <= ms(cfg.SLA)
	// Little's law: users = throughput x (response + think time). Closed
	// loop, the think time is the pacing's mean (keying + think per the
	// mix); open loop, it gives the mean transactions in flight.
	think := 0.0
	if cfg.Run.KeyingThinking > 0 {
		think = MeanPacingSeconds(o.MixPct, cfg.Run.KeyingThinking)
	}
	l := results.Round(st.TPS*(st.ARTMs/1000+think), 2)
	st.LittleUsers = &l
	return st
}

// judge sets the ramp's headline figures from its steps.
func judge(out *results.Ramp, cfg RampConfig) {
	if len(out.Steps) == 0 {
		out.Missing["max_tps"] = "no load completed its timed window"
		out.Missing["max_users_within_sla"] = out.Missing["max_tps"]
		return
	}
	var best float64
	reached := false
	for _, st := range out.Steps {
		best = max(best, st.TPS)
		reached = reached || !st.WithinSLA
		if st.WithinSLA && (out.MaxUsersWithinSLA == nil || st.Users > *out.MaxUsersWithinSLA) {
			u := st.Users
			out.MaxUsersWithinSLA = &u
		}
		if cfg.ARTAtUsers == st.Users {
			a := st.ARTMs
			out.ARTAtMs = &a
		}
	}
	out.MaxTPS = &best
	out.SLAReached = &reached
	if out.MaxUsersWithinSLA == nil {
		out.Missing["max_users_within_sla"] = fmt.Sprintf("the first load, %d users, already broke the SLA", out.Steps[0].Users)
	}
	if cfg.ARTAtUsers > 0 && out.ARTAtMs == nil {
		out.Missing["art_at_ms"] = fmt.Sprintf("the ramp ran no load of %d users", cfg.ARTAtUsers)
	}
}

// MeanPacingSeconds is the mean keying plus think time per transaction for
// the given mix (per cent by type name) at the given scale of the spec's
// times.
func MeanPacingSeconds(mixPct map[string]float64, scale float64) float64 {
	var s float64
	for i := range numTxTypes {
		s += mixPct[TxType(i).String()] / 100 * (keyingSeconds[i] + thinkSeconds[i]) * scale
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func withinWord(ok bool) string {
	if ok {
		return "within the SLA"
	}
	return "over the SLA"
}
