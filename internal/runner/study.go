package runner

import (
	"context"
	"fmt"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/study"
)

// Study is a study ready to run: every step planned.
type Study struct {
	Study  *study.Study
	Limits *LimitsNeed // the study's own, nil when it sets none
	Steps  []PlannedStep
	YAML   []byte // the resolved study file
}

// PlannedStep is a study's step, checked, with what it needs and its work.
type PlannedStep struct {
	study.Step
	Index int // from 1
	Needs Needs
	Body  StepFunc
}

// StudyLimits reads the study's cache and storage limits; nil when it sets
// none. The memory bound adds room for every backend to the two caches.
func StudyLimits(st *study.Study, c *Config, p *Problems) *LimitsNeed {
	t := st.Target
	if t.OSCacheLimit == "" && t.StorageLimit.IsZero() {
		return nil
	}
	l := &LimitsNeed{DBCache: c.DBCache, OSCache: t.OSCacheLimit, Required: !t.LimitsOptional,
		Fix: "set limits_optional: true in the study's target to run without them (results then say so), or run as root on a machine with cgroups"}
	l.Spec = limits.Spec{Path: c.Path, ReadIOPS: t.StorageLimit.ReadIOPS, WriteIOPS: t.StorageLimit.WriteIOPS,
		ReadBPS: t.StorageLimit.ReadMBPS * 1e6, WriteBPS: t.StorageLimit.WriteMBPS * 1e6}
	if t.OSCacheLimit != "" {
		osCache := cacheLimit(p, "os_cache_limit", t.OSCacheLimit)
		if dbCache := c.dbCacheBytes(); dbCache > 0 && osCache > 0 {
			l.Spec.MemoryBytes = int64(max(c.Instances, 1))*(dbCache+serverMemory(c.Engine)) + osCache
		}
	}
	return l
}

// Needs is what the whole study needs from its session: the study's
// limits, else those of the first step that asks for some.
func (r *Study) Needs() Needs {
	var n Needs
	for _, st := range r.Steps {
		n.Database = n.Database || st.Needs.Database
		n.MaxConns = max(n.MaxConns, st.Needs.MaxConns)
		n.Bytes = max(n.Bytes, st.Needs.Bytes)
		if b := st.Needs.Build; b != nil && (n.Build == nil || b.Bytes > n.Build.Bytes) {
			n.Build = b
		}
		if n.Limits == nil {
			n.Limits = st.Needs.Limits
		}
	}
	if r.Limits != nil {
		n.Limits = r.Limits
		if !n.Database {
			n.Limits.DBCache = ""
		}
		if n.Limits.Spec.MemoryBytes > 0 {
			n.Limits.Spec.MemoryBytes += backendAllowance * int64(n.MaxConns)
		}
	}
	var m map[string]any
	if yaml.Unmarshal(r.YAML, &m) == nil {
		n.Study = m
	}
	return n
}

// Body runs the steps in order, each repetition kept in results.json as it
// completes; then summarises the repeats and judges the thresholds.
func (r *Study) Body() StepFunc {
	return func(ctx context.Context, s *Session) ([]results.Step, error) {
		if err := writeFile(s.dir, r.YAML, "study.yaml"); err != nil {
			return nil, err
		}
		total := 0
		for _, st := range r.Steps {
			total += st.Repeat
		}
		n := 0
		for _, st := range r.Steps {
			for rep := 1; rep <= st.Repeat; rep++ {
				cold := r.Study.ColdStart
				if st.ColdStart != nil {
					cold = *st.ColdStart
				}
				if n > 0 && cold {
					if err := s.coldStart(ctx); err != nil {
						return nil, err
					}
				}
				n++
				s.rawPrefix = fmt.Sprintf("step%02d-", n)
				what := st.Kind
				if st.Repeat > 1 {
					what = fmt.Sprintf("%s, repeat %d of %d", st.Kind, rep, st.Repeat)
				}
				s.prog.Phase("study step %d of %d: %s", n, total, what)
				s.metricsStep("study step %d of %d: %s", n, total, what)
				began := time.Now()
				steps, err := st.Body(ctx, s)
				for i := range steps {
					steps[i].StudyStep = st.Index
					if st.Repeat > 1 {
						steps[i].Repeat, steps[i].Repeats = rep, st.Repeat
					}
					if st.Name != "" && steps[i].Kind == st.Kind {
						steps[i].Name = st.Name
					}
				}
				if kerr := s.keep(ctx, steps, err); err == nil {
					err = kerr
				}
				s.prog.Phase("study step %d of %d: %s done in %s", n, total, what, time.Since(began).Round(time.Second))
				if err != nil {
					return nil, err
				}
			}
		}
		return nil, r.judge(s)
	}
}

// judge writes the repeats' summaries and the thresholds' verdicts; a
// failed threshold is exit 3.
func (r *Study) judge(s *Session) error {
	run, err := results.Load(s.dir.Path)
	if err != nil {
		return err
	}
	var reps []results.Repeats
	for _, st := range r.Steps {
		if st.Repeat < 2 {
			continue
		}
		group := stepsOf(run, st.Index, st.Kind)
		if len(group) == 0 {
			continue
		}
		reps = append(reps, results.Repeats{StudyStep: st.Index, Kind: st.Kind, Name: group[0].Name, N: len(group),
			Metrics: results.SummariseRepeats(group)})
	}
	var verdicts []results.Verdict
	var failed []string
	for _, t := range r.Study.Thresholds {
		for _, v := range r.verdicts(run, t) {
			verdicts = append(verdicts, v)
			if !v.OK {
				failed = append(failed, v.Threshold)
			}
		}
	}
	if err := s.dir.Update(func(run *results.Run) { run.Repeats, run.Verdicts = reps, verdicts }); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &fault.ThresholdError{Failed: failed}
	}
	return nil
}

// verdicts judges a threshold on every study step of its kind: the median
// over the step's repeats.
func (r *Study) verdicts(run *results.Run, t study.Threshold) []results.Verdict {
	var out []results.Verdict
	for _, st := range r.Steps {
		if st.Kind != t.Kind {
			continue
		}
		group := stepsOf(run, st.Index, st.Kind)
		v := results.Verdict{Threshold: t.Expr}
		var values []float64
		for _, g := range group {
			v.Step = g.Name
			if m, ok := results.LookupMetric(g, t.Metric); ok {
				values = append(values, m.Value)
			}
		}
		if len(values) == 0 {
			v.Reason = "not measured"
		} else {
			med := results.Median(values)
			v.Value = &med
			v.OK = t.Holds(med)
			if len(values) > 1 {
				v.Reason = fmt.Sprintf("median of %d repeats", len(values))
			}
		}
		out = append(out, v)
	}
	return out
}

// stepsOf returns the complete steps of a kind from one study step.
func stepsOf(run *results.Run, index int, kind string) []results.Step {
	var out []results.Step
	for _, st := range run.Steps {
		if st.StudyStep == index && st.Kind == kind && st.Status == results.StatusComplete {
			out = append(out, st)
		}
	}
	return out
}

// coldStart makes the next step start cold: the server restarted and its
// files evicted from the OS page cache.
func (s *Session) coldStart(ctx context.Context) error {
	if s.target == nil || s.target.Local() == nil {
		return nil
	}
	s.prog.Phase("cold start: restarting the server with its files out of the OS page cache")
	dropped, err := s.restartCold(ctx)
	if err == nil && !dropped {
		s.prog.Phase("cold start: some of the server's files could not be evicted from the OS page cache (calibra may not open them); the next step may start warm")
	}
	return err
}
