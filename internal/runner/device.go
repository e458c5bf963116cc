package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

// The defaults and syntax the device command's flags show.
const (
	DeviceDefaultSpecs = device.DefaultSpecs
	DeviceDefaultQDs   = device.DefaultQDs
	DeviceSpecSyntax   = device.SpecSyntax
	// DeviceSteadyRounds is the default round limit of --steady-state.
	DeviceSteadyRounds = device.DefaultSteadyRounds
	DeviceP99Bounds    = device.DefaultP99Bounds
)

// Device is a device step: the targets, the access specs and the sweep.
type Device struct {
	Paths                     PathList
	Specs, QDs, Size, Fio     string
	P99Bounds                 string // "1ms,5ms": each spec's IOPS at p99 ≤ each
	Engine                    string
	AllowDestroy              []string
	Workers, Repeat           int
	Ramp, Runtime, MaxLatency time.Duration
	Direct                    bool
	// SteadyState holds each point to the PTS steady state, in rounds of
	// Runtime, at most SteadyMaxRounds of them.
	SteadyState     bool
	SteadyMaxRounds int
}

// PlanDevice checks a device step and every target it names.
func PlanDevice(ctx context.Context, c *Config, f *Device) (Needs, StepFunc, error) {
	cfg, err := f.config(ctx, c)
	if err != nil {
		return Needs{}, nil, err
	}
	// config has checked every target; the run describes the first.
	storage := results.Storage{Path: cfg.Targets[0].Path, Device: cfg.Targets[0].Path}
	if cfg.Targets[0].Kind != device.KindBlock {
		storage = observe.Storage(cfg.Targets[0].Path)
	}
	return Needs{Storage: &storage}, func(ctx context.Context, s *Session) ([]results.Step, error) {
		if c.Lab != "" { // the lab came up with the session: measure its file system
			cfg.Targets = []device.Target{{Kind: device.KindDir, Path: s.path}}
		}
		return deviceStep(ctx, s, cfg)
	}, nil
}

// checkBounds adds the flags' values past their upper bounds to p.
func (f *Device) checkBounds(qds []int, p *Problems) {
	p.most("--workers", f.Workers, MaxWorkers)
	p.most("--repeat", f.Repeat, MaxRepeat)
	p.longest("--runtime", f.Runtime, MaxWindow)
	p.longest("--ramp", f.Ramp, MaxWindow)
	p.longest("--max-latency", f.MaxLatency, MaxLatency)
	p.most("--steady-max-rounds", f.SteadyMaxRounds, MaxSteadyRounds)
	for _, qd := range qds {
		if qd > MaxQD {
			p.Add(fmt.Sprintf("--qd must be at most %d, the deepest queue Linux gives a device", MaxQD), "--qd %q holds %d, too deep a queue", f.QDs, qd)
			return
		}
	}
}

// PathList lets --path repeat or take a comma list; the first value given
// replaces the default.
type PathList struct {
	paths []string
	set   bool
}

func (l *PathList) String() string { return strings.Join(l.paths, ",") }
func (l *PathList) Type() string   { return "paths" }
func (l *PathList) Set(v string) error {
	if !l.set {
		l.paths, l.set = nil, true
	}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			l.paths = append(l.paths, p)
		}
	}
	return nil
}

// config checks every flag and target, reporting every problem at once,
// and returns the sweep.
func (f *Device) config(ctx context.Context, c *Config) (device.Config, error) {
	var p Problems
	c.Validate(&p)
	if c.DSN != "" {
		p.Add("drop --dsn", "calibra device measures the storage under --path and uses no database (--dsn)")
	}
	specs, err := device.ParseSpecs(f.Specs)
	if err != nil {
		p = append(p, err)
	}
	qds, err := device.ParseQDs(f.QDs)
	if err != nil {
		p = append(p, err)
	}
	if f.Workers <= 0 {
		p.Add("give a whole number of 1 or more", "--workers %d is not positive", f.Workers)
	}
	size := f.checkSize(specs, &p)
	if f.Runtime <= 0 {
		p.Add("give a duration such as 30s or 5m", "--runtime %s is not positive", f.Runtime)
	} else if f.Runtime < time.Second {
		// fio samples every 500 ms; a shorter window is mostly start-up.
		p.Add("give 1s or more", "--runtime %s is shorter than 1s", f.Runtime)
	}
	if f.Ramp < 0 {
		p.Add("give 0s or a duration such as 5s", "--ramp %s is negative", f.Ramp)
	}
	if f.Repeat <= 0 {
		p.Add("give a whole number of 1 or more", "--repeat %d is not positive", f.Repeat)
	}
	if f.MaxLatency <= 0 {
		p.Add("give a duration such as 1ms or 500us", "--max-latency %s is not positive", f.MaxLatency)
	}
	f.checkBounds(qds, &p)
	f.checkSteady(&p)
	bounds, err := device.ParseBounds("--p99-bounds", f.P99Bounds, MaxLatency)
	if err != nil {
		p = append(p, err)
	}
	engine := f.Engine
	if engine == "auto" {
		engine = ""
	} else if !slices.Contains(device.Engines, engine) {
		p.Add("use auto, "+strings.Join(device.Engines, ", "), "--ioengine %q is not an ioengine calibra drives", f.Engine)
	}
	fio, err := device.FindFio(ctx, f.Fio)
	if err != nil {
		p = append(p, err)
	}
	var writers []string
	for _, s := range specs {
		if s.Writes() {
			writers = append(writers, s.Name)
		}
	}
	paths := f.Paths.paths
	if !f.Paths.set {
		paths = []string{c.Path}
	}
	if c.Lab != "" { // the lab is built under the one directory given
		if len(paths) != 1 {
			p.Add("give one --path directory with --lab", "--lab builds one stack, under one directory, and --path names %d targets", len(paths))
		}
		c.Path = paths[0]
	}
	workers := int64(f.Workers)
	if workers < 0 || workers > MaxWorkers {
		workers = 0 // refused above: no space to ask for
	}
	targets := f.targets(paths, writers, workers*size, &p)
	if err := p.Err(); err != nil {
		return device.Config{}, err
	}
	return device.Config{Fio: fio, Specs: specs, QDs: qds, Targets: targets, Workers: f.Workers, Size: size,
		Ramp: f.Ramp, Runtime: f.Runtime, Repeats: f.Repeat, MaxLatency: f.MaxLatency, Direct: f.Direct,
		Engine: engine, Seed: c.Seed, SteadyState: f.SteadyState, MaxRounds: f.SteadyMaxRounds, P99Bounds: bounds}, nil
}

// checkSteady checks the steady-state flags: a window needs five rounds,
// and the window's rounds stand in for repeats.
func (f *Device) checkSteady(p *Problems) {
	if f.SteadyMaxRounds < device.SteadyWindow {
		p.Add(fmt.Sprintf("give %d or more, the rounds of one window (the PTS gives %d)", device.SteadyWindow, device.DefaultSteadyRounds),
			"--steady-max-rounds %d is fewer than the %d rounds of a steady-state window", f.SteadyMaxRounds, device.SteadyWindow)
	}
	if f.SteadyState && f.Repeat > 1 {
		p.Add("drop --repeat with --steady-state", "--steady-state measures each point over a window of %d rounds; --repeat %d would repeat whole windows", device.SteadyWindow, f.Repeat)
	}
}

// checkSize reads --size: whole 4 KiB pages (direct I/O offsets must be
// aligned), and at least the largest block size.
func (f *Device) checkSize(specs []device.Spec, p *Problems) int64 {
	size, err := device.ParseSize(f.Size)
	switch {
	case err != nil:
		p.Add("give a size such as 256MiB or 4GiB", "--size %v", err)
	case size <= 0:
		p.Add("give a size such as 256MiB or 4GiB", "--size %s is not positive", f.Size)
	case size%4096 != 0:
		p.Add("give a multiple of 4 KiB, such as 256MiB", "--size %s is not a multiple of 4 KiB", f.Size)
	default:
		for _, s := range specs {
			if s.BlockSize > size {
				p.Add(fmt.Sprintf("give a --size of at least %s", device.FormatSize(s.BlockSize)),
					"--size %s is smaller than one block of %s", f.Size, s.Name)
				return 0
			}
		}
		return size
	}
	return 0
}

// filesystem is the --path directories on one file system, and the bytes
// they need of it together.
type filesystem struct {
	dirs  []int // indexes into paths
	bytes uint64
}

// targets checks the file system's directories, the free space once for
// them all, and puts each one's target in its slot.
func (fs *filesystem) targets(paths []string, slots []*device.Target, p *Problems) {
	for j, i := range fs.dirs {
		bytes := uint64(0)
		if j == 0 {
			bytes = fs.bytes // the whole file system's share, checked once
		}
		if err := CheckPath(paths[i], bytes, "calibra device"); err != nil {
			*p = append(*p, err)
			continue
		}
		t, err := device.DirTarget(paths[i])
		if err != nil {
			*p = append(*p, err)
			continue
		}
		slots[i] = &t
	}
}

// targets checks every --path, keeping their order. Directories go through
// checkPath, their free space summed per file system; files and block
// devices through the device layer. need is the bytes per target (0 when
// --size or --workers is bad).
func (f *Device) targets(paths, writers []string, need int64, p *Problems) []device.Target {
	if len(paths) == 0 {
		p.Add("give a directory, a file or a block device", "--path is empty")
	}
	var filesystems []*filesystem
	byDev := map[uint64]*filesystem{}
	slots := make([]*device.Target, len(paths))
	seen := map[string]bool{}
	for i, path := range paths {
		if r, err := device.Resolve(path); err == nil {
			if seen[r] {
				p.Add("give each target once", "--path names %s twice", path)
				continue
			}
			seen[r] = true
		}
		st, err := os.Stat(path)
		switch {
		case err != nil: // checkPath says what is wrong
			if err := CheckPath(path, 0, "calibra device"); err != nil {
				*p = append(*p, err)
			}
		case st.IsDir():
			dev := uint64(st.Sys().(*syscall.Stat_t).Dev)
			if byDev[dev] == nil {
				byDev[dev] = &filesystem{}
				filesystems = append(filesystems, byDev[dev])
			}
			byDev[dev].dirs = append(byDev[dev].dirs, i)
			byDev[dev].bytes += uint64(need)
		default:
			t, err := device.RawTarget(path, f.AllowDestroy, writers, need)
			if err != nil {
				*p = append(*p, err)
				continue
			}
			slots[i] = &t
		}
	}
	for _, fs := range filesystems {
		fs.targets(paths, slots, p)
	}
	for _, a := range f.AllowDestroy {
		if r, err := device.Resolve(a); err != nil || !seen[r] {
			p.Add("name a file or block device also given to --path", "--allow-destroy %s is not one of the --path targets", a)
		}
	}
	var targets []device.Target
	for _, t := range slots {
		if t == nil {
			continue
		}
		if f.Direct {
			if err := device.CheckDirect(*t); err != nil {
				*p = append(*p, err)
				continue
			}
		}
		targets = append(targets, *t)
	}
	return targets
}

func deviceStep(ctx context.Context, s *Session, cfg device.Config) ([]results.Step, error) {
	started := time.Now()
	env := device.Env{Group: s.env.Group, Prog: s.prog, RawDir: s.dir.File("raw"), Cgroup: s.cgroup}
	if s.obs != nil {
		env.Edge, env.Window = s.obs.Edge, s.obs.Window
	}
	if s.metrics != nil {
		env.Point = s.metrics.DevicePoint
	}
	out, err := device.Sweep(ctx, cfg, env)
	return []results.Step{newStep(results.KindDevice, "device", started, out)}, err
}
