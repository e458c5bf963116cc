package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/verdict"
)

func (a *app) oltpRampLayer(c *common) layer {
	var l loadFlags
	var from, to, by, artAt int
	var sla time.Duration
	var slaMetric string
	var fall float64
	cmd := &cobra.Command{
		Use:   "ramp",
		Short: "Ramp the users to a response-time SLA: max TPS and max users within the SLA",
		Long: `The Benchmark Factory study's question: how many users can this storage serve
within a response-time SLA? Run a timed window at each user load from --from
to --to by --step, each with its own warm-up, and judge each against --sla:

  tps                    transactions completed per second in the window
  art_ms / p90_ms        mean and 90th-percentile response time of all
                         transactions of the window (HDR histograms)
  max_tps                the highest TPS of any load
  max_users_within_sla   the highest load whose --sla-metric stayed at or
                         under --sla
  art_at_ms              the ART at the load named by --art-at
  little_users           Little's law: TPS x (response + mean think time),
                         to compare with the users actually running; a big
                         gap means the driver, not the database, set the pace

The ramp stops at the first load over the SLA, when TPS falls more than
--fall below the best so far (the system is past saturation), or, in an open
loop, when the achieved TPS falls that far short of the offered rate.

A closed loop (the default) runs users back to back, or with the
specification's keying and think times (--keying-thinking on or a scale). An
open loop (--rate-per-user R) offers R transactions a second per user on a
fixed schedule and measures latency from the scheduled start.`,
		Example: `  calibra oltp ramp --warehouses 4 --from 2 --to 32 --step 2 --sla 2s --path /mnt/array
  calibra oltp ramp --from 10 --to 100 --step 10 --keying-thinking 0.05 --sla 50ms --sla-metric p90
  calibra oltp ramp --from 4 --to 64 --step 4 --rate-per-user 20 --sla 20ms --art-at 32`,
	}
	l.register(cmd, 5*time.Second, 20*time.Second, "each load's")
	f := cmd.Flags()
	f.IntVar(&from, "from", 1, "users of the first load")
	f.IntVar(&to, "to", 16, "users of the last load")
	f.IntVar(&by, "step", 1, "users added at each load")
	f.DurationVar(&sla, "sla", 2*time.Second, "the response-time SLA (the study's 2 s ART)")
	f.StringVar(&slaMetric, "sla-metric", oltp.SLAART, "what the SLA bounds: art (mean) or p90")
	f.IntVar(&artAt, "art-at", 0, "report the ART at this user load (0: none)")
	f.Float64Var(&fall, "fall", 5, "stop when TPS falls more than this per cent below the best so far")
	return layer{kind: results.KindRamp, cmd: cmd, plan: func(context.Context) (sessionNeeds, stepFunc, error) {
		var p problems
		c.validate(&p)
		if from <= 0 {
			p.add("give a whole number of 1 or more", "--from %d is not positive", from)
		}
		if by <= 0 {
			p.add("give a whole number of 1 or more", "--step %d is not positive", by)
		}
		if to < from {
			p.add("give a --to at or above --from", "the ramp from %d to %d users is empty", from, to)
		}
		if sla <= 0 {
			p.add("give a duration such as 2s or 50ms", "--sla %s is not positive", sla)
		}
		if slaMetric != oltp.SLAART && slaMetric != oltp.SLAP90 {
			p.add("use art or p90", "--sla-metric %q is not an SLA metric", slaMetric)
		}
		if artAt < 0 || artAt > 0 && by > 0 && (artAt < from || artAt > to || (artAt-from)%by != 0) {
			p.add(fmt.Sprintf("give one of the ramp's loads (%d to %d by %d), or 0", from, to, by), "--art-at %d is not a load of the ramp", artAt)
		}
		if fall <= 0 || fall >= 100 {
			p.add("give a per cent between 0 and 100, such as 5", "--fall %g is not between 0 and 100", fall)
		}
		run := l.check(cmd, c, max(to, 1), &p)
		if err := p.err(); err != nil {
			return sessionNeeds{}, nil, err
		}
		cfg := oltp.RampConfig{Run: run, From: from, To: to, By: by, SLA: sla, SLAMetric: slaMetric,
			ARTAtUsers: artAt, FallPct: fall, MinSteps: 2}
		return l.needs(to), func(ctx context.Context, s *session) ([]results.Step, error) {
			return rampSteps(ctx, s, cfg, l, c.seed)
		}, nil
	}}
}

// rampSteps prepares the schema, then runs the ramp; each load's seconds
// and histograms are kept like a timed run's, and its CPU figures come
// from the observers over its window.
func rampSteps(ctx context.Context, s *session, cfg oltp.RampConfig, l loadFlags, seed uint64) ([]results.Step, error) {
	steps, err := prepareLoad(ctx, s, cfg.Run, l, seed)
	if err != nil {
		return steps, err
	}
	cfg.Run.Edge = s.edge()
	var windows []*results.Observe
	var drivers []*float64
	var recErr error
	cfg.OnStep = func(o *results.OLTP, rec *oltp.Record) {
		if recErr == nil {
			recErr = writeRecord(s, rec, fmt.Sprintf("ramp-%du", o.Users))
		}
		var w *results.Observe
		if s.obs != nil && o.WindowStart != nil && o.WindowEnd != nil {
			w = s.obs.Window(*o.WindowStart, *o.WindowEnd)
		}
		windows = append(windows, w)
		var d *float64
		if o.Driver != nil {
			d = &o.Driver.MachineSharePct
		}
		drivers = append(drivers, d)
	}
	started := time.Now()
	out, err := oltp.Ramp(ctx, s.target, cfg, s.prog)
	for i := range out.Steps {
		if i < len(windows) && windows[i] != nil {
			out.Steps[i].Observed(windows[i])
			out.Steps[i].LimitedBy, out.Steps[i].LimitedByEvidence = verdict.Decide(windows[i], drivers[i])
		}
	}
	if err == nil {
		err = recErr
	}
	name := fmt.Sprintf("ramp %d-%d users by %d", cfg.From, cfg.To, cfg.By)
	return append(steps, newStep(results.KindRamp, name, started, out)), err
}
