package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

type deviceFlags struct {
	paths                     pathList
	specs, qds, size, fio     string
	engine                    string
	allowDestroy              []string
	workers, repeat           int
	ramp, runtime, maxLatency time.Duration
	direct                    bool
}

// pathList lets --path repeat or take a comma list; the first value given
// replaces the default.
type pathList struct {
	paths []string
	set   bool
}

func (l *pathList) String() string { return strings.Join(l.paths, ",") }
func (l *pathList) Type() string   { return "paths" }
func (l *pathList) Set(v string) error {
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

// deviceCommand is the device layer as a command: --path may name several
// targets, and the database flags are hidden.
func (a *app) deviceCommand() *cobra.Command {
	var f *deviceFlags
	cmd := a.command(func(c *common) layer {
		l := a.deviceLayer(c)
		f = l.flags
		return l.layer
	})
	fl := cmd.Flags()
	pathFlag := fl.Lookup("path")
	pathFlag.Value = &f.paths
	pathFlag.Usage = "storage under test: a directory, an existing file or a block device; repeat or comma-separate for several targets"
	// The device layer needs no database.
	for _, name := range []string{"dsn", "dsn-file", "pg-bin", "run-as", "db-cache"} {
		_ = fl.MarkHidden(name)
	}
	return cmd
}

type deviceLayer struct {
	layer
	flags *deviceFlags
}

func (a *app) deviceLayer(c *common) deviceLayer {
	f := &deviceFlags{}
	cmd := &cobra.Command{
		Use:   "device",
		Short: "Layer 1: the storage alone, through fio (IOPS, MB/s and latency per queue depth)",
		Long: `Run the studies' device tests on the storage under test with fio: each access
spec at each queue depth, every worker on its own file or region, a ramp then a
timed window, read back from fio's JSON.

Targets (--path, repeat it or give a comma list):
  directory     calibra writes DIR/calibra-device/w0, w1... and removes them
  file          an existing file, used in place and kept; each worker has its
                own region of --size bytes
  block device  used in place; each worker has its own region. Writing to it
                needs --allow-destroy naming it, and is refused while it or a
                partition is mounted or otherwise in use
Before the sweep calibra writes every worker's region once, so that reads hit
written blocks, not holes (files and devices only with --allow-destroy).

Access specs (--specs, a comma list; the default is the Iometer study's four,
aligned at 4 KiB):
  4k-randread    4 KiB, 100% read, random
  8k-randrw70    8 KiB, 70% read, random (OLTP-like)
  1m-seqread     1 MiB, 100% read, sequential (OLAP-like)
  1m-seqwrite    1 MiB, 100% write, sequential
  8k-randread    8 KiB, 100% read, random    \
  8k-randwrite   8 KiB, 100% write, random    > the fio study's
  8k-randrw60    8 KiB, 60% read, random     /
  custom         ` + device.SpecSyntax + `
                 e.g. oltp16k:bs=16k,read=70,random=100; read and random
                 default to 100, align to the block size (at most 4 KiB)

Per point: IOPS, MB/s (10^6 bytes per second), completion latency (fio's
clat: submission to completion) mean, p50, p99, p99.9 and max in µs from
fio's histogram, and I/O errors (fio counts them and goes on). With --repeat
N each point is the mean of N runs, with their spread. Per spec, the answer to
"how many IOPS within --max-latency?": the highest IOPS whose p99 stays at
or under it.

Direct I/O (O_DIRECT) is the default; a file system that refuses it (ramfs,
tmpfs before Linux 6.6, some FUSE) is refused with exit 2 unless you ask for
buffered I/O with --direct=false, which measures the page cache too. The
ioengine is io_uring, else libaio, else psync: the first that a short probe
finds working is used and recorded. Every fio job file, JSON report and log
is kept under RUNDIR/raw/.`,
		Example: `  # The four Iometer specs over queue depths 1 to 32 on a mounted array
  calibra device --path /mnt/array

  # Two specs, a short sweep, 256 MiB per worker
  calibra device --path /mnt/array --specs 4k-randread,1m-seqwrite --qd 1,4 --runtime 3s --ramp 1s --size 256MiB

  # Two LUNs at once, 8 workers each, 3 repeats, IOPS within 2 ms
  calibra device --path /mnt/lun1,/mnt/lun2 --workers 8 --repeat 3 --max-latency 2ms

  # A raw device (its contents are lost)
  calibra device --path /dev/nvme1n1 --allow-destroy /dev/nvme1n1 --specs 8k-randrw70,oltp16k:bs=16k,read=70`,
	}
	plan := func(ctx context.Context) (sessionNeeds, stepFunc, error) {
		cfg, err := f.config(ctx, c)
		if err != nil {
			return sessionNeeds{}, nil, err
		}
		// config has checked every target; the run describes the first.
		storage := results.Storage{Path: cfg.Targets[0].Path, Device: cfg.Targets[0].Path}
		if cfg.Targets[0].Kind != device.KindBlock {
			storage = observe.Storage(cfg.Targets[0].Path)
		}
		return sessionNeeds{storage: &storage}, func(ctx context.Context, s *session) ([]results.Step, error) {
			if c.lab != "" { // the lab came up with the session: measure its file system
				cfg.Targets = []device.Target{{Kind: device.KindDir, Path: s.path}}
			}
			return a.deviceStep(ctx, s, cfg)
		}, nil
	}
	fl := cmd.Flags()
	fl.StringVar(&f.specs, "specs", device.DefaultSpecs, "access specs, built-in names or custom "+device.SpecSyntax)
	fl.StringVar(&f.qds, "qd", device.DefaultQDs, "queue depths to sweep, per worker")
	fl.IntVar(&f.workers, "workers", 1, "workers per target, each on its own file or region")
	fl.StringVar(&f.size, "size", "1GiB", "bytes per worker, e.g. 256MiB or 4GiB (a multiple of 4 KiB)")
	fl.DurationVar(&f.ramp, "ramp", 5*time.Second, "warm-up of each run, not measured")
	fl.DurationVar(&f.runtime, "runtime", 30*time.Second, "timed window of each run (1s or more)")
	fl.IntVar(&f.repeat, "repeat", 1, "runs of each point; the point is their mean, with the spread")
	fl.DurationVar(&f.maxLatency, "max-latency", time.Millisecond, "latency bound: per spec, the highest IOPS whose p99 stays at or under it")
	fl.StringVar(&f.engine, "ioengine", "auto", "fio ioengine: auto (io_uring, else libaio, else psync), io_uring, libaio or psync")
	fl.BoolVar(&f.direct, "direct", true, "direct I/O (O_DIRECT), bypassing the page cache")
	fl.StringVar(&f.fio, "fio", "", "fio program to run (default: fio on PATH)")
	fl.StringSliceVar(&f.allowDestroy, "allow-destroy", nil, "file or block device given to --path that calibra may overwrite")
	return deviceLayer{layer: layer{kind: results.KindDevice, cmd: cmd, plan: plan}, flags: f}
}

// config checks every flag and target, reporting every problem at once,
// and returns the sweep.
func (f *deviceFlags) config(ctx context.Context, c *common) (device.Config, error) {
	var p problems
	c.validate(&p)
	if c.dsn != "" {
		p.add("drop --dsn", "calibra device measures the storage under --path and uses no database (--dsn)")
	}
	specs, err := device.ParseSpecs(f.specs)
	if err != nil {
		p = append(p, err)
	}
	qds, err := device.ParseQDs(f.qds)
	if err != nil {
		p = append(p, err)
	}
	if f.workers <= 0 {
		p.add("give a whole number of 1 or more", "--workers %d is not positive", f.workers)
	}
	size := f.checkSize(specs, &p)
	if f.runtime <= 0 {
		p.add("give a duration such as 30s or 5m", "--runtime %s is not positive", f.runtime)
	} else if f.runtime < time.Second {
		// fio samples every 500 ms; a shorter window is mostly start-up.
		p.add("give 1s or more", "--runtime %s is shorter than 1s", f.runtime)
	}
	if f.ramp < 0 {
		p.add("give 0s or a duration such as 5s", "--ramp %s is negative", f.ramp)
	}
	if f.repeat <= 0 {
		p.add("give a whole number of 1 or more", "--repeat %d is not positive", f.repeat)
	}
	if f.maxLatency <= 0 {
		p.add("give a duration such as 1ms or 500us", "--max-latency %s is not positive", f.maxLatency)
	}
	engine := f.engine
	if engine == "auto" {
		engine = ""
	} else if !slices.Contains(device.Engines, engine) {
		p.add("use auto, "+strings.Join(device.Engines, ", "), "--ioengine %q is not an ioengine calibra drives", f.engine)
	}
	fio, err := device.FindFio(ctx, f.fio)
	if err != nil {
		p = append(p, err)
	}
	var writers []string
	for _, s := range specs {
		if s.Writes() {
			writers = append(writers, s.Name)
		}
	}
	paths := f.paths.paths
	if !f.paths.set {
		paths = []string{c.path}
	}
	if c.lab != "" { // the lab is built under the one directory given
		if len(paths) != 1 {
			p.add("give one --path directory with --lab", "--lab builds one stack, under one directory, and --path names %d targets", len(paths))
		}
		c.path = paths[0]
	}
	targets := f.targets(paths, writers, int64(max(f.workers, 0))*size, &p)
	if err := p.err(); err != nil {
		return device.Config{}, err
	}
	return device.Config{Fio: fio, Specs: specs, QDs: qds, Targets: targets, Workers: f.workers, Size: size,
		Ramp: f.ramp, Runtime: f.runtime, Repeats: f.repeat, MaxLatency: f.maxLatency, Direct: f.direct,
		Engine: engine, Seed: c.seed}, nil
}

// checkSize reads --size: whole 4 KiB pages (direct I/O offsets must be
// aligned), and at least the largest block size.
func (f *deviceFlags) checkSize(specs []device.Spec, p *problems) int64 {
	size, err := device.ParseSize(f.size)
	switch {
	case err != nil:
		p.add("give a size such as 256MiB or 4GiB", "--size %v", err)
	case size <= 0:
		p.add("give a size such as 256MiB or 4GiB", "--size %s is not positive", f.size)
	case size%4096 != 0:
		p.add("give a multiple of 4 KiB, such as 256MiB", "--size %s is not a multiple of 4 KiB", f.size)
	default:
		for _, s := range specs {
			if s.BlockSize > size {
				p.add(fmt.Sprintf("give a --size of at least %s", device.FormatSize(s.BlockSize)),
					"--size %s is smaller than one block of %s", f.size, s.Name)
				return 0
			}
		}
		return size
	}
	return 0
}

// targets checks every --path, keeping their order. Directories go through
// checkPath, their free space summed per file system; files and block
// devices through the device layer. need is the bytes per target (0 when
// --size or --workers is bad).
func (f *deviceFlags) targets(paths, writers []string, need int64, p *problems) []device.Target {
	if len(paths) == 0 {
		p.add("give a directory, a file or a block device", "--path is empty")
	}
	type filesystem struct {
		dirs  []int // indexes into paths
		bytes uint64
	}
	var filesystems []*filesystem
	byDev := map[uint64]*filesystem{}
	slots := make([]*device.Target, len(paths))
	seen := map[string]bool{}
	for i, path := range paths {
		if r, err := device.Resolve(path); err == nil {
			if seen[r] {
				p.add("give each target once", "--path names %s twice", path)
				continue
			}
			seen[r] = true
		}
		st, err := os.Stat(path)
		switch {
		case err != nil: // checkPath says what is wrong
			if err := checkPath(path, 0, "calibra device"); err != nil {
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
			t, err := device.RawTarget(path, f.allowDestroy, writers, need)
			if err != nil {
				*p = append(*p, err)
				continue
			}
			slots[i] = &t
		}
	}
	for _, fs := range filesystems {
		for j, i := range fs.dirs {
			bytes := uint64(0)
			if j == 0 {
				bytes = fs.bytes // the whole file system's share, checked once
			}
			if err := checkPath(paths[i], bytes, "calibra device"); err != nil {
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
	for _, a := range f.allowDestroy {
		if r, err := device.Resolve(a); err != nil || !seen[r] {
			p.add("name a file or block device also given to --path", "--allow-destroy %s is not one of the --path targets", a)
		}
	}
	var targets []device.Target
	for _, t := range slots {
		if t == nil {
			continue
		}
		if f.direct {
			if err := device.CheckDirect(*t); err != nil {
				*p = append(*p, err)
				continue
			}
		}
		targets = append(targets, *t)
	}
	return targets
}

func (a *app) deviceStep(ctx context.Context, s *session, cfg device.Config) ([]results.Step, error) {
	started := time.Now()
	env := device.Env{Group: a.group, Prog: s.prog, RawDir: s.dir.File("raw"), Cgroup: s.cgroup}
	if s.obs != nil {
		env.Edge, env.Window = s.obs.Edge, s.obs.Window
	}
	out, err := device.Sweep(ctx, cfg, env)
	return []results.Step{newStep(results.KindDevice, "device", started, out)}, err
}

// writeDeviceSummary prints a device step: its setup, a line per point,
// and per spec the IOPS within the latency bound.
func writeDeviceSummary(b *strings.Builder, st results.Step, d *results.Device) {
	fmt.Fprintf(b, "  device     %s %s, %s, %d target(s) x %d worker(s) x %s, %.0f s runs after %.0f s ramp, x%d (%s)\n",
		d.FioVersion, d.IOEngine, device.IOMode(d.Direct), len(d.Targets), d.WorkersPerTarget, device.FormatSize(d.SizeBytes), d.RuntimeS, d.RampS, d.Repeats, st.Status)
	fmt.Fprintf(b, "  %-14s %4s %10s %9s %9s %9s %9s %9s %9s %7s  (latency: completion, µs)\n",
		"spec", "qd", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "max", "errors")
	for _, p := range d.Points {
		fmt.Fprintf(b, "  %-14s %4d %10.0f %9.1f %s %7d\n", p.Spec, p.QD, p.IOPS, p.MBps, latencyColumns(p.LatUs), p.Errors)
	}
	bound := device.FormatMicros(d.MaxLatencyUs)
	for _, s := range d.Specs {
		judged := "p99 ≤ " + bound
		if s.JudgedOn == "mbps" {
			judged = "max MB/s"
		}
		if s.AtMaxLatency == nil {
			fmt.Fprintf(b, "  %s  %-14s n/a: %s\n", judged, s.Name, s.AtMaxLatencyMissing)
			continue
		}
		m := s.AtMaxLatency
		fmt.Fprintf(b, "  %s  %-14s %.0f IOPS, %.1f MB/s at qd %d (p99 %s)", judged, s.Name, m.IOPS, m.MBps, m.QD, device.FormatMicros(m.P99Us))
		if m.LimitedBy != "" {
			fmt.Fprintf(b, ", limited by %s", m.LimitedBy)
		}
		fmt.Fprintln(b)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

// latencyColumns are a point's five latency columns; n/a when no I/O
// completed.
func latencyColumns(l *results.DeviceLatency) string {
	if l == nil {
		return strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%9s ", "n/a"), 5), " ")
	}
	return fmt.Sprintf("%9.1f %9.1f %9.1f %9.1f %9.1f", l.Mean, l.P50, l.P99, l.P999, l.Max)
}
