package oltp

import (
	"cmp"
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// ScaleConfig is a timed run repeated on the first 1, 2, 4... servers of a
// group of independent instances.
type ScaleConfig struct {
	Run     RunConfig
	Servers []int // ascending
	// OnStep gets each point's own oltp result, as RampConfig.OnStep.
	OnStep func(*results.OLTP, *Record)
}

// Scale runs cfg.Run on the first k instances of e for each k of
// cfg.Servers, the users dealt round-robin over those k, and reads each
// point's sums from its run. A cluster's nodes share one database, so
// fewer of them is not a smaller cluster: Scale refuses one.
func Scale(ctx context.Context, e engine.Engine, cfg ScaleConfig, prog *progress.Printer) (*results.Scale, error) {
	members := engine.MembersOf(e)
	if g, ok := e.(engine.Group); ok && g.SharedData() {
		fix := "compare clusters of each size as study variants instead"
		if key := engine.NodesKey(e.Name()); key != "" {
			fix += " (target." + key + " in each)"
		}
		return nil, fault.Input(fix, "a scale step drives the first servers of independent instances, and this target's nodes share one database")
	}
	if last := cfg.Servers[len(cfg.Servers)-1]; last > len(members) {
		return nil, fault.Input(fmt.Sprintf("give --instances %d or more (target.instances in a study)", last),
			"the scale step drives up to %d servers, and the target has %d", last, len(members))
	}
	out := &results.Scale{Workload: Workload, Users: cfg.Run.Users, Mode: string(cfg.Run.Mode), Profile: string(cmp.Or(cfg.Run.Profile, ProfileSpec)),
		KeyingThinking: false, LatencyBasis: "service", StepRampupS: cfg.Run.Rampup.Seconds(), StepDurationS: cfg.Run.Duration.Seconds(), Missing: map[string]string{}}
	if cfg.Run.KeyingThinking > 0 {
		out.KeyingThinking, out.LatencyBasis = cfg.Run.KeyingThinking, "response"
	}
	if cfg.Run.RatePerUser > 0 {
		out.LatencyBasis = "response"
	}
	var err error
	for i, k := range cfg.Servers {
		prog.Phase("oltp scale: point %d of %d, %d users on %d servers", i+1, len(cfg.Servers), cfg.Run.Users, k)
		target := members[0]
		if k > 1 {
			target = engine.NewInstances(members[:k])
		}
		var o *results.OLTP
		var rec *Record
		o, rec, err = Run(ctx, target, cfg.Run, prog)
		if o != nil && cfg.OnStep != nil {
			cfg.OnStep(o, rec)
		}
		if err == nil && (o == nil || o.LatMs == nil) {
			err = fmt.Errorf("the run on %d servers completed no transaction in its window", k)
		}
		if err != nil {
			break
		}
		out.Warehouses = o.Warehouses
		p := results.ScalePoint{Servers: k, NOPM: o.NOPM, TPMDB: o.TPMDB, TPMClient: o.TPMClient, ARTMs: o.ARTMs, P90Ms: o.LatMs.P90}
		for _, tx := range o.Transactions {
			p.Errors += tx.Errors
		}
		if p.NOPM != nil && (out.MaxNOPM == nil || *p.NOPM > *out.MaxNOPM) {
			out.MaxNOPM = p.NOPM
		}
		out.Points = append(out.Points, p)
		nopm := "n/a"
		if p.NOPM != nil {
			nopm = fmt.Sprintf("%.0f", *p.NOPM)
		}
		prog.Phase("oltp scale: %d servers: NOPM %s, ART %.2f ms", k, nopm, p.ARTMs)
	}
	if out.MaxNOPM == nil {
		out.Missing["max_nopm"] = "no point completed its timed window with the server's counters"
	}
	return out, err
}
