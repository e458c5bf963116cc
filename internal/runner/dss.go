package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// DSSSchema is the schema of the TPC-H-like tables.
const DSSSchema = dss.Schema

// DSSBuild is a dss build step, or the build a dss run makes first.
type DSSBuild struct {
	SF      float64
	Workers int
	Rebuild bool
	Tpchgen string
	// SFGiven says a scale factor was asked for: --sf given, or a build's
	// own (0 is "as built" only for a run).
	SFGiven bool
}

// DSSRun is a dss step: the power test, the throughput test, or both
// (Test "run", the study's kind dss).
type DSSRun struct {
	Build        DSSBuild
	Test         string // power, throughput or run
	Streams, DOP int
	QueryTimeout time.Duration
	StreamsSet   bool // --streams given
}

// PlanDSSBuild checks a dss build, and that the generator is there.
func PlanDSSBuild(ctx context.Context, c *Config, b DSSBuild) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	b.validate(&p)
	if _, err := dss.FindGenerator(ctx, b.Tpchgen); err != nil {
		p = append(p, err)
	}
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	need, err := spaceFor("--sf", b.SF, bytesPerSF)
	if err != nil {
		return Needs{}, nil, err
	}
	return Needs{Database: true, MaxConns: b.Workers + 10, Bytes: need, Rights: rightsOf(dss.Dialects)}, dssBuildBody(b.config()), nil
}

// PlanDSSRun checks a power test, a throughput test or both.
func PlanDSSRun(c *Config, r DSSRun) (Needs, StepFunc, error) {
	b, streams, dop, timeout := r.Build, r.Streams, r.DOP, r.QueryTimeout
	cfg := dss.RunConfig{Power: r.Test != "throughput", Throughput: r.Test != "power"}
	var p Problems
	c.Validate(&p)
	b.validate(&p)
	if cfg.Throughput && r.StreamsSet && streams <= 0 {
		p.Add("give a whole number of 1 or more", "--streams %d is not positive", streams)
	}
	if dop < -1 {
		p.Add("give 0 (no parallel workers) or more, or -1 for the server's setting", "--dop %d is below -1", dop)
	}
	if timeout < 0 {
		p.Add("give a duration such as 10m, or 0 for none", "--query-timeout %s is negative", timeout)
	}
	p.longest("--query-timeout", timeout, MaxWindow)
	p.most("--streams", streams, MaxWorkers)
	p.most("--dop", dop, MaxWorkers)
	conns := 0
	if !math.IsNaN(b.SF) && b.SF <= MaxSF {
		conns = max(streams, dss.MinStreams(b.SF)) + b.Workers + 10
	}
	p.managedConns(c, conns, fmt.Sprintf("--streams %d", streams))
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	cfg.Streams, cfg.Seed, cfg.DOP, cfg.QueryTimeout = streams, c.Seed, dop, timeout
	build := b.config()
	need := uint64(minFree)
	implicit, err := dssImplicitBuild(build.ScaleFactor)
	if err != nil {
		return Needs{}, nil, err
	}
	return Needs{Database: true, MaxConns: conns, Bytes: need, Build: implicit}, dssRunBody(cfg, build), nil
}

// dssImplicitBuild is a dss run's build at scale factor sf (0: 1) when it
// finds no schema, with the space 'dss build' asks for it.
func dssImplicitBuild(sf float64) (*BuildNeed, error) {
	if sf == 0 {
		sf = 1
	}
	need, err := spaceFor("--sf", sf, bytesPerSF)
	if err != nil {
		return nil, err
	}
	return &BuildNeed{Bytes: need, What: fmt.Sprintf("a build at scale factor %g", sf)}, nil
}

// bytesPerSF is a generous estimate of one scale factor on disk: about
// 1.4 GB of tables, 0.4 GB of indexes, and WAL.
const bytesPerSF = 3e9

func (b *DSSBuild) validate(p *Problems) {
	if math.IsNaN(b.SF) || math.IsInf(b.SF, 0) {
		p.Add("give a scale factor above 0, such as 0.1, 1 or 10", "--sf %g is not a number", b.SF)
	} else if b.SF <= 0 && b.SFGiven {
		p.Add("give a scale factor above 0, such as 0.1, 1 or 10", "--sf %g is not positive", b.SF)
	} else if b.SF > 0 && b.SF < MinSF {
		p.Add(fmt.Sprintf("--sf must be at least %g, the smallest whose every table holds rows", MinSF), "--sf %g is too small", b.SF)
	} else if b.SF > MaxSF {
		p.Add(fmt.Sprintf("--sf must be at most %d, TPC-H's largest scale factor", MaxSF), "--sf %s makes no possible size", strconv.FormatFloat(b.SF, 'f', -1, 64))
	}
	if b.Workers <= 0 {
		p.Add("give a whole number of 1 or more", "--load-workers %d is not positive", b.Workers)
	}
	p.most("--load-workers", b.Workers, MaxWorkers)
}

func (b *DSSBuild) config() dss.BuildConfig {
	return dss.BuildConfig{ScaleFactor: b.SF, Workers: b.Workers, Rebuild: b.Rebuild, Tpchgen: b.Tpchgen}
}

// dssBuildBody builds the TPC-H-like schema as one step.
func dssBuildBody(cfg dss.BuildConfig) StepFunc {
	return func(ctx context.Context, s *Session) ([]results.Step, error) {
		st, err := dssBuildStep(ctx, s, cfg)
		return []results.Step{st}, err
	}
}

func dssBuildStep(ctx context.Context, s *Session, cfg dss.BuildConfig) (results.Step, error) {
	started := time.Now()
	cfg.Group = s.env.Group
	out, err := dss.Build(ctx, s.target, cfg, s.prog)
	if out == nil {
		out = &results.DSSBuild{Workload: dss.Workload, ScaleFactor: cfg.ScaleFactor, Workers: cfg.Workers}
	}
	step := newStep(results.KindDSSBuild, fmt.Sprintf("dss build sf %g", cfg.ScaleFactor), started, out)
	if err == nil {
		s.prog.Phase("dss build: scale factor %g, %.0f MB in %.1f s (%.1f MB/s): load %.1f s, indexes %.1f s, analyze %.1f s",
			cfg.ScaleFactor, float64(out.DBBytes)/1e6, out.TotalS, out.MBPerS, out.LoadS, out.IndexS, out.AnalyzeS)
	}
	return step, err
}

// dssRunBody runs the power and/or throughput test as one step. When the
// managed instance has no build, it builds first at build.ScaleFactor (1
// when 0); a build at another scale factor than one asked for is refused.
func dssRunBody(cfg dss.RunConfig, build dss.BuildConfig) StepFunc {
	return func(ctx context.Context, s *Session) ([]results.Step, error) {
		var steps []results.Step
		bi, err := dss.Built(ctx, s.target)
		switch {
		case errors.Is(err, dss.ErrNotBuilt) && s.target.Local() == nil:
			return nil, fault.Input("build it first with 'calibra dss build --dsn ...'", "the database of --dsn holds no TPC-H-like schema")
		case errors.Is(err, dss.ErrNotBuilt):
			if build.ScaleFactor == 0 {
				build.ScaleFactor = 1
			}
			// Checked before anything was made when no data directory
			// was there; checked now for one without a schema.
			need, err := dssImplicitBuild(build.ScaleFactor)
			if err == nil {
				err = s.checkBuildSpace(need)
			}
			if err != nil {
				return nil, err
			}
			s.prog.Phase("dss: no TPC-H-like build on the managed instance; building scale factor %g first", build.ScaleFactor)
			st, err := dssBuildStep(ctx, s, build)
			steps = append(steps, st)
			if err != nil {
				return steps, err
			}
		case err != nil:
			return nil, err
		case build.ScaleFactor != 0 && bi.ScaleFactor != build.ScaleFactor:
			return nil, fault.Input(fmt.Sprintf("drop --sf, or rebuild with 'calibra dss build --sf %g --rebuild'", build.ScaleFactor),
				"the database is built at scale factor %g, not %g", bi.ScaleFactor, build.ScaleFactor)
		}
		started := time.Now()
		cfg.Edge = s.edge()
		out, err := dss.Run(ctx, s.target, cfg, s.prog)
		if out == nil {
			return steps, err
		}
		// The studies report storage bandwidth per test: each test gets
		// its own observations beside the step's.
		if s.obs != nil {
			if p := out.Power; p != nil && !p.FinishedAt.IsZero() {
				p.Observe = s.obs.Window(p.StartedAt, p.FinishedAt)
			}
			if th := out.Throughput; th != nil && !th.FinishedAt.IsZero() {
				th.Observe = s.obs.Window(th.StartedAt, th.FinishedAt)
			}
		}
		var tests []string
		if cfg.Power {
			tests = append(tests, "power")
		}
		if out.Throughput != nil {
			tests = append(tests, fmt.Sprintf("throughput %d streams", out.Throughput.Streams))
		}
		name := fmt.Sprintf("dss sf %g %s", out.ScaleFactor, strings.Join(tests, " + "))
		return append(steps, newStep(results.KindDSS, name, started, out)), err
	}
}
