package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

// Cache defaults of iocal: small, so that modest calibration data is much
// larger than every cache.
const (
	IOCalDBCache      = "128MB"
	IOCalOSCacheLimit = "128MiB"
	// backendAllowance is the memory cgroup's room per connection beyond
	// the two caches: a backend's own memory.
	backendAllowance = 3 << 20
)

// The defaults and bounds of the iocal command's flags.
const (
	IOCalDefaultJobs         = iocal.DefaultJobs
	IOCalMaxJobs             = iocal.MaxJobs
	IOCalDefaultMaxLatency   = iocal.DefaultMaxLatency
	IOCalDefaultReadsPerCall = iocal.DefaultReadsPerCall
	IOCalMaxReadsPerCall     = iocal.MaxReadsPerCall
)

// IOCalTests are the iocal tests, in the order they run; the default runs
// IOCalDefaultTests.
var (
	IOCalTests        = iocal.Tests
	IOCalDefaultTests = iocal.DefaultTests
)

// IOCalDefaultLoaders is the default number of loaders of the calibration
// data.
func IOCalDefaultLoaders() int { return iocal.DefaultLoaders() }

// IOCal is an iocal step: the calibration data, the sweep and its bounds.
type IOCal struct {
	Size, Jobs, Tests, OSCacheLimit string
	Point, Warmup, MaxLatency       time.Duration
	Keep                            bool
	Loaders                         int
	ReadsPerCall                    int
	// OSCacheLimitSet says the limit was asked for, so it must be applied.
	OSCacheLimitSet bool
}

// PlanIOCal checks an iocal step and the limits its server is to run under.
func PlanIOCal(c *Config, f IOCal) (Needs, StepFunc, error) {
	cfg, spec, err := f.config(c)
	if err != nil {
		return Needs{}, nil, err
	}
	lim := &LimitsNeed{Spec: spec, DBCache: c.DBCache, OSCache: f.OSCacheLimit, Required: f.OSCacheLimitSet,
		Fix: "drop --os-cache-limit to run without the bound (results then say cache-dominated), or run as root on a machine with cgroups"}
	need, err := spaceFor("--size", float64(cfg.SizeBytes), 3)
	if err != nil {
		return Needs{}, nil, err
	}
	maxJobs := cfg.Jobs[len(cfg.Jobs)-1]
	return Needs{Database: true, MaxConns: max(maxJobs, cfg.Loaders) + 10, Bytes: need, Limits: lim, Rights: rightsOf(iocal.Dialects)}, iocalBody(cfg), nil
}

// config checks every flag at once and returns the calibration and the
// limits the managed server is to run under.
func (f *IOCal) config(c *Config) (iocal.Config, limits.Spec, error) {
	var p Problems
	c.Validate(&p)
	if c.DSN != "" {
		if f.OSCacheLimitSet {
			p.Add("drop --os-cache-limit, or use the managed instance", "--os-cache-limit bounds the managed server and cannot be used with --dsn")
		}
	}
	jobs, err := iocal.ParseJobs(f.Jobs)
	if err != nil {
		p = append(p, err)
	}
	tests, err := iocal.ParseTests(f.Tests)
	if err != nil {
		p = append(p, err)
	}
	if f.Point <= 0 {
		p.Add("give a duration such as 5s or 30s", "--point %s is not positive", f.Point)
	}
	if f.Warmup < 0 {
		p.Add("give 0s or a duration such as 1s", "--warmup %s is negative", f.Warmup)
	}
	if f.MaxLatency <= 0 {
		p.Add("give a duration such as 10ms", "--max-latency %s is not positive", f.MaxLatency)
	}
	if f.Loaders <= 0 {
		p.Add("give a whole number of 1 or more", "--loaders %d is not positive", f.Loaders)
	}
	if f.ReadsPerCall <= 0 || f.ReadsPerCall > iocal.MaxReadsPerCall {
		p.Add(fmt.Sprintf("give a whole number from 1 to %d, such as %d", iocal.MaxReadsPerCall, iocal.DefaultReadsPerCall),
			"--reads-per-call %d is not from 1 to %d", f.ReadsPerCall, iocal.MaxReadsPerCall)
	}
	p.longest("--point", f.Point, MaxWindow)
	p.longest("--warmup", f.Warmup, MaxWindow)
	p.longest("--max-latency", f.MaxLatency, MaxLatency)
	p.most("--loaders", f.Loaders, MaxWorkers)
	osCache := cacheLimit(&p, "--os-cache-limit", f.OSCacheLimit)
	spec := limits.Spec{Path: c.Path, MemoryBytes: c.dbCacheBytes() + osCache + serverMemory(c.Engine) + backendAllowance*int64(max(slices.Max(append([]int{0}, jobs...)), f.Loaders)+10)}
	var size int64
	if f.Size == "" {
		size = max(1<<30, (4*spec.MemoryBytes+(256<<20)-1)/(256<<20)*(256<<20))
	} else {
		// Less than one 4 MiB sequential chunk measures nothing.
		if size = positiveSize(&p, "--size", f.Size); size > 0 && size < 4<<20 {
			p.Add("give 4MiB or more, such as 1GiB", "--size %s is below one 4 MiB sequential chunk", f.Size)
		}
	}
	if err := p.Err(); err != nil {
		return iocal.Config{}, spec, err
	}
	return iocal.Config{SizeBytes: size, Jobs: jobs, Point: f.Point, Warmup: f.Warmup, MaxLatency: f.MaxLatency,
		Tests: tests, Keep: f.Keep, Seed: c.Seed, Loaders: f.Loaders, ReadsPerCall: f.ReadsPerCall}, spec, nil
}

// positiveSize reads a size flag such as 256MiB; 0 after a problem.
func positiveSize(p *Problems, flag, s string) int64 {
	n, err := device.ParseSize(s)
	switch {
	case err != nil:
		p.Add("give a size such as 256MiB or 4GiB", "%s %v", flag, err)
	case n <= 0:
		p.Add("give a size such as 256MiB or 4GiB", "%s %s is not positive", flag, s)
	default:
		return n
	}
	return 0
}

// cacheLimit reads a page cache bound such as 256MiB: positive, and
// below the machine's memory, which a larger bound would not bound.
func cacheLimit(p *Problems, flag, s string) int64 {
	n := positiveSize(p, flag, s)
	if mem := observe.Host().MemBytes; mem > 0 && n > 0 && uint64(n) >= mem {
		p.Add(fmt.Sprintf("%s must be below this machine's %s of memory", flag, humanBytes(mem)), "%s %s bounds nothing", flag, s)
	}
	return n
}

// iocalBody is the work of an iocal step, for the command and the study
// runner alike: check the rights on an existing server, then calibrate.
func iocalBody(cfg iocal.Config) StepFunc {
	return func(ctx context.Context, s *Session) ([]results.Step, error) {
		started := time.Now()
		words := s.words()
		env := iocal.Env{Prog: s.prog, Log: words.Log, Waits: words.WaitKind, CacheBytes: s.cacheBytes, Device: results.DevicePoints(s.dir.Steps())}
		if s.metrics != nil {
			env.Point = s.metrics.IOCalPoint
		}
		if s.limits != nil {
			// The step records its own cold starts in its copy.
			lim := *s.limits
			env.Limits = &lim
		}
		switch {
		case s.target.Local() == nil:
			env.CacheUnbounded = "the server is not calibra's (--dsn): its caches cannot be bounded, results may be cache-dominated"
		case s.cacheBytes == 0:
			reason := "no limit was asked"
			if s.limits != nil && s.limits.NotApplied["limits"] != "" {
				reason = s.limits.NotApplied["limits"]
			}
			env.CacheUnbounded = fmt.Sprintf("the OS page cache could not be bounded (%s): results may be cache-dominated", reason)
		}
		if s.obs != nil {
			env.Edge, env.Window = s.obs.Edge, s.obs.Window
		}
		if s.target.Local() != nil {
			env.ColdStart = func(ctx context.Context) (bool, error) { return s.restartCold(ctx) }
		}
		out, err := iocal.Run(ctx, s.target, cfg, env)
		return []results.Step{newStep(results.KindIOCal, "iocal", started, out)}, err
	}
}
