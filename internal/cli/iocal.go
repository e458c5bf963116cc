package cli

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/results"
)

// Cache defaults of iocal: small, so that modest calibration data is much
// larger than every cache.
const (
	iocalDBCache      = "128MB"
	iocalOSCacheLimit = "128MiB"
	// backendAllowance is the memory cgroup's room per connection beyond
	// the two caches: a backend's own memory.
	backendAllowance = 3 << 20
)

type iocalFlags struct {
	size, jobs, tests, osCache string
	point, warmup, maxLatency  time.Duration
	keep                       bool
	loaders                    int
}

// iocalCommand is the iocal layer as a command, with a small database
// cache by default so that modest calibration data outgrows it.
func (a *app) iocalCommand() *cobra.Command {
	cmd := a.command(a.iocalLayer)
	dbCache := cmd.Flags().Lookup("db-cache")
	dbCache.DefValue = iocalDBCache
	_ = dbCache.Value.Set(iocalDBCache)
	return cmd
}

func (a *app) iocalLayer(c *common) layer {
	var f iocalFlags
	cmd := &cobra.Command{
		Use:   "iocal",
		Short: "Layers 2 and 3: I/O through the database (IOPS, MB/s, latency per parallel jobs)",
		Long: `Calibrate the storage's I/O through PostgreSQL, the open counterpart of
Oracle's CALIBRATE_IO and of the peakmarks storage tests: load calibration
data (one row per database block) on the storage under test, then sweep each
test over parallel jobs (one connection each), with a cold start before each
test (restart, OS page cache dropped where permitted):

  random    single-block reads: each query reads the row of a uniformly
            random block by its ctid (a TID Scan reads exactly that block)
  seqread   sequential reads: each query counts the rows of the next 4 MiB
            of the data (TID range scan), chunks handed out in order
  seqwrite  bulk load: each job loops BEGIN; TRUNCATE its table; COPY FREEZE
            one chunk of rows; COMMIT (WAL-logged, synchronous commit)

Per point, over its timed window (--point, after an unmeasured --warmup):
  iops          random reads completed per second (client count)
  dbps          database blocks per second: read from the OS
                (pg_stat_database blks_read) or written (seqwrite)
  mbps          10^6 bytes per second of database blocks read or written
  lat_ms        mean and p99 of a query's round trip as the client sees it
                (HDR histogram)
  cpu_busy_pct, cpu_sys_pct  the host's CPU over the window
  disk_r_iops, disk_r_mbps   what reached the device (/proc/diskstats)
  db_hit_pct    share of block requests served by shared_buffers
Then for random reads: max_iops, the highest IOPS among the points whose
mean latency stays at or under --max-latency (CALIBRATE_IO's rule), the
latency at that point, and saturation_jobs, the first point after which
throughput grows by less than 5%; for each sequential test, max_mbps.

Reads must reach the storage, not a cache. The managed server runs in a
memory cgroup of --db-cache + --os-cache-limit + 3 MiB per connection,
which bounds its page cache, and --size defaults to 4 times that limit. When
the data is less than 3 times the caches, or the page cache cannot be
bounded (no cgroup, or --dsn), results.json says "cache_dominated" and why.
The calibration data is dropped at the end unless --keep.`,
		Example: `  # The acceptance sweep: 1 GiB of data, 4 points of 5 s, all three tests
  calibra iocal --path /mnt/array --size 1GiB --jobs 1,2,4,8 --point 5s

  # Random reads only, CALIBRATE_IO style, up to 1024 jobs, 20 ms bound
  calibra iocal --path /mnt/array --tests random --jobs 1,4,16,64,256,1024 --max-latency 20ms

  # An existing server (calibra creates and drops the schema calibra_iocal)
  calibra iocal --dsn postgres://bench@db1/bench --size 64GiB`,
	}
	plan := func(context.Context) (sessionNeeds, stepFunc, error) {
		cfg, spec, err := f.config(cmd, c)
		if err != nil {
			return sessionNeeds{}, nil, err
		}
		lim := &limitsNeed{spec: spec, dbCache: c.dbCache, osCache: f.osCache, required: cmd.Flags().Changed("os-cache-limit"),
			fix: "drop --os-cache-limit to run without the bound (results then say cache-dominated), or run as root on a machine with cgroups"}
		need, err := spaceFor("--size", float64(cfg.SizeBytes), 3)
		if err != nil {
			return sessionNeeds{}, nil, err
		}
		maxJobs := cfg.Jobs[len(cfg.Jobs)-1]
		return sessionNeeds{database: true, maxConns: max(maxJobs, cfg.Loaders) + 10, bytes: need, limits: lim}, a.iocalBody(cfg), nil
	}
	fl := cmd.Flags()
	fl.StringVar(&f.size, "size", "", "calibration data, e.g. 4GiB (default: 4 times the memory limit of the server, at least 1GiB)")
	fl.StringVar(&f.jobs, "jobs", iocal.DefaultJobs, fmt.Sprintf("parallel jobs to sweep, each with its own connection (up to %d)", iocal.MaxJobs))
	fl.DurationVar(&f.point, "point", 8*time.Second, "timed window of each point")
	fl.DurationVar(&f.warmup, "warmup", time.Second, "unmeasured run before each point")
	fl.DurationVar(&f.maxLatency, "max-latency", iocal.DefaultMaxLatency, "bound on the mean single-block read latency for max_iops (CALIBRATE_IO's minimum is 10ms)")
	fl.StringVar(&f.tests, "tests", strings.Join(iocal.Tests, ","), "tests to run: random, seqread, seqwrite")
	fl.StringVar(&f.osCache, "os-cache-limit", iocalOSCacheLimit, "bound on the managed server's OS page cache (a memory cgroup); given explicitly it must be applied")
	fl.BoolVar(&f.keep, "keep", false, "keep the calibration data for a later run of the same --size")
	fl.IntVar(&f.loaders, "loaders", iocal.DefaultLoaders(), "parallel loaders (and tables) of the calibration data")
	return layer{kind: results.KindIOCal, cmd: cmd, plan: plan}
}

// config checks every flag at once and returns the calibration and the
// limits the managed server is to run under.
func (f *iocalFlags) config(cmd *cobra.Command, c *common) (iocal.Config, limits.Spec, error) {
	var p problems
	c.validate(&p)
	if c.dsn != "" {
		if u, err := url.Parse(c.dsn); err == nil && strings.Contains(c.dsn, "://") && u.Scheme != "postgres" && u.Scheme != "postgresql" {
			p.add("give a postgres:// DSN: PostgreSQL is the only engine calibra iocal measures so far", "--dsn names the engine %q, which calibra iocal does not support", u.Scheme)
		}
		if cmd.Flags().Changed("os-cache-limit") {
			p.add("drop --os-cache-limit, or use the managed instance", "--os-cache-limit bounds the managed server and cannot be used with --dsn")
		}
	}
	jobs, err := iocal.ParseJobs(f.jobs)
	if err != nil {
		p = append(p, err)
	}
	tests, err := iocal.ParseTests(f.tests)
	if err != nil {
		p = append(p, err)
	}
	if f.point <= 0 {
		p.add("give a duration such as 5s or 30s", "--point %s is not positive", f.point)
	}
	if f.warmup < 0 {
		p.add("give 0s or a duration such as 1s", "--warmup %s is negative", f.warmup)
	}
	if f.maxLatency <= 0 {
		p.add("give a duration such as 10ms", "--max-latency %s is not positive", f.maxLatency)
	}
	if f.loaders <= 0 {
		p.add("give a whole number of 1 or more", "--loaders %d is not positive", f.loaders)
	}
	osCache := positiveSize(&p, "--os-cache-limit", f.osCache)
	dbCache := int64(0)
	if c.dsn == "" && validMemory(c.dbCache) {
		dbCache, _ = device.ParseSize(c.dbCache)
	}
	spec := limits.Spec{Path: c.path, MemoryBytes: dbCache + osCache + backendAllowance*int64(max(slices.Max(append([]int{0}, jobs...)), f.loaders)+10)}
	var size int64
	if f.size == "" {
		size = max(1<<30, (4*spec.MemoryBytes+(256<<20)-1)/(256<<20)*(256<<20))
	} else {
		// Less than one 4 MiB sequential chunk measures nothing.
		if size = positiveSize(&p, "--size", f.size); size > 0 && size < 4<<20 {
			p.add("give 4MiB or more, such as 1GiB", "--size %s is below one 4 MiB sequential chunk", f.size)
		}
	}
	if err := p.err(); err != nil {
		return iocal.Config{}, spec, err
	}
	return iocal.Config{SizeBytes: size, Jobs: jobs, Point: f.point, Warmup: f.warmup, MaxLatency: f.maxLatency,
		Tests: tests, Keep: f.keep, Seed: c.seed, Loaders: f.loaders}, spec, nil
}

// positiveSize reads a size flag such as 256MiB; 0 after a problem.
func positiveSize(p *problems, flag, s string) int64 {
	n, err := device.ParseSize(s)
	switch {
	case err != nil:
		p.add("give a size such as 256MiB or 4GiB", "%s %v", flag, err)
	case n <= 0:
		p.add("give a size such as 256MiB or 4GiB", "%s %s is not positive", flag, s)
	default:
		return n
	}
	return 0
}

// iocalBody is the work of an iocal step, for the command and the study
// runner alike: check the rights on an existing server, then calibrate.
func (a *app) iocalBody(cfg iocal.Config) stepFunc {
	return func(ctx context.Context, s *session) ([]results.Step, error) {
		started := time.Now()
		env := iocal.Env{Prog: s.prog, CacheBytes: s.cacheBytes}
		if s.limits != nil {
			// The step records its own cold starts in its copy.
			lim := *s.limits
			env.Limits = &lim
		}
		switch {
		case s.target.Managed == nil:
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
		if s.target.Managed != nil {
			env.ColdStart = func(ctx context.Context) (bool, error) { return a.restartCold(ctx, s) }
		} else if err := iocal.CheckRights(ctx, s.target); err != nil {
			return nil, err
		}
		out, err := iocal.Run(ctx, s.target, cfg, env)
		return []results.Step{newStep(results.KindIOCal, "iocal", started, out)}, err
	}
}

// writeIOCalSummary prints an iocal step: the headline figures, a line per
// point, and whether caches may dominate.
func writeIOCalSummary(b *strings.Builder, st results.Step, o *results.IOCal) {
	fmt.Fprintf(b, "  iocal      %s of data in %d-byte blocks, %.0f s points (%s)\n",
		device.FormatSize(o.DataBytes), o.BlockSizeBytes, o.PointS, st.Status)
	line := func(test string, p results.IOCalPoint) {
		lat := "n/a"
		if p.LatMs != nil {
			lat = fmt.Sprintf("%9.3f %9.3f", p.LatMs.Mean, p.LatMs.P99)
		}
		dev := "n/a"
		if p.DiskRIOPS != nil {
			dev = fmt.Sprintf("%.0f", *p.DiskRIOPS)
		}
		fmt.Fprintf(b, "  %-9s %5d %10.0f %10.0f %10s %9.1f %s  %s\n", test, p.Jobs, p.IOPS, p.DBPS, dev, p.MBPS, lat, p.LimitedBy)
	}
	fmt.Fprintf(b, "  %-9s %5s %10s %10s %10s %9s %9s %9s  %s  (latency ms)\n", "test", "jobs", "IOPS", "blocks/s", "device r/s", "MB/s", "mean", "p99", "limited by")
	if r := o.RandomRead; r != nil {
		for _, p := range r.Points {
			line("random", p)
		}
		if r.MaxIOPS != nil {
			fmt.Fprintf(b, "  max_iops   %.0f at mean latency %.3f ms (bound %g ms)", *r.MaxIOPS, *r.LatencyMsAtMax, r.MaxLatencyMs)
			if r.DeviceIOPSAtMax != nil {
				fmt.Fprintf(b, ", %.0f reads/s reached the device", *r.DeviceIOPSAtMax)
			}
		} else {
			fmt.Fprintf(b, "  max_iops   n/a: %s", o.Missing["random_read.max_iops"])
		}
		if r.SaturationJobs != nil {
			fmt.Fprintf(b, ", saturation at %d jobs", *r.SaturationJobs)
		}
		fmt.Fprintln(b)
	}
	for _, s := range []struct {
		name string
		seq  *results.IOCalSeq
	}{{"seqread", o.SeqRead}, {"seqwrite", o.SeqWrite}} {
		if s.seq == nil {
			continue
		}
		for _, p := range s.seq.Points {
			line(s.name, p)
		}
		fmt.Fprintf(b, "  %-9s max %.1f MB/s\n", s.name, s.seq.MaxMBPS)
	}
	if o.CacheDominated != "" {
		fmt.Fprintf(b, "  cache-dominated: %s\n", o.CacheDominated)
	}
	for _, n := range o.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}
