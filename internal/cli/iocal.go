package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

// iocalCommand is the iocal layer as a command, with a small database
// cache by default so that modest calibration data outgrows it.
func (a *app) iocalCommand() *cobra.Command {
	cmd := a.command(a.iocalLayer)
	dbCache := cmd.Flags().Lookup("db-cache")
	dbCache.DefValue = runner.IOCalDBCache
	_ = dbCache.Value.Set(runner.IOCalDBCache)
	return cmd
}

// iocalHelp is calibra iocal --help's long text.
const iocalHelp = `Calibrate the storage's I/O through the database, the open counterpart of
Oracle's CALIBRATE_IO, SLOB and the peakmarks storage tests: load calibration
data (one row per database block) on the storage under test, then sweep each
test over parallel jobs (one connection each), with a cold start before each
read test (restart, the server's files evicted from the OS page cache):

  random      random single-block reads issued by the server: each call
              reads --reads-per-call uniformly random blocks in one query
              (a scan by block address or key list, in the engine's own
              dialect: docs/iocal.md), so the client's share of a read is a
              fraction of a round trip (the SLOB and pgio method)
  clientread  the same reads one a query: latency as a client sees it
              (by name only)
  seqread     sequential reads: each query counts the rows of the next
              4 MiB of the data, chunks handed out in order
  seqwrite    sequential writes made by the server: each call has it
              generate and append one chunk of one-block rows to the
              job's own table (INSERT ... SELECT), one transaction
              committed synchronously; no row passes through calibra
  wal         commit latency: each job is a committer whose one-row
              INSERTs commit synchronously, looped in the server where
              the engine waits for each flush there, else by the client
              (results.json's commit_method says which); on --wal-path's
              storage when given

Per point, over its timed window (--point, after an unmeasured --warmup):
  iops          blocks read per second as the client counts them (rows)
  server_reads_ps, server_read_ms  blocks the server counted reading a
                second, and its own mean read time (track_io_timing)
  disk_r_iops, disk_r_await_ms     what reached the device, its await
  dbps          database blocks per second read from the OS or written
  mbps          10^6 bytes per second of database blocks read or written
  lat_ms        mean and p99 latency (HDR): per block for random, a query's
                round trip for clientread, a commit's for wal (timed
                by the server where it loops the commits)
  commits_ps, wal_syncs_ps, disk_w_await_ms  the commit test's rate, the
                server's WAL syncs and the WAL device's write await
  data_w_mbps, wal_mbps, disk_w_mbps, disk_w_share_pct  what a write
                point's server wrote to its data files and WAL, what the
                device wrote, and that as a share of the device step's
                sequential write (after a device step)
  cpu_busy_pct, cpu_sys_pct  the host's CPU over the window
  db_hit_pct    share of block requests served by the database cache
Then for random reads: max_iops, the highest IOPS among the points whose
mean latency stays at or under --max-latency (CALIBRATE_IO's rule), the
latency at that point, and saturation_jobs, the first point after which
throughput grows by less than 5%; for each sequential test, max_mbps; for
wal, max_commits_ps and the latency of one committer.

Reads must reach the storage, not a cache. The managed server runs in a
memory cgroup of --db-cache + --os-cache-limit + 3 MiB per connection,
which bounds its page cache, and --size defaults to 4 times that limit. When
the data is less than 3 times the caches, or the page cache cannot be
bounded (no cgroup, or --dsn), results.json says "cache_dominated" and why.
The calibration data is dropped at the end unless --keep.`

func (a *app) iocalLayer(c *runner.Config) layer {
	var f runner.IOCal
	cmd := &cobra.Command{
		Use:   "iocal",
		Short: "Layers 2 and 3: I/O through the database (IOPS, MB/s, latency per parallel jobs)",
		Long:  iocalHelp,
		Example: `  # The acceptance sweep: 1 GiB of data, 4 points of 5 s, all three tests
  calibra iocal --path /mnt/array --size 1GiB --jobs 1,2,4,8 --point 5s

  # Random reads only, CALIBRATE_IO style, up to 1024 jobs, 20 ms bound
  calibra iocal --path /mnt/array --tests random --jobs 1,4,16,64,256,1024 --max-latency 20ms

  # An existing server (calibra creates and drops the schema calibra_iocal)
  calibra iocal --dsn ` + runner.ExampleDSN() + ` --size 64GiB`,
	}
	plan := func(context.Context) (runner.Needs, runner.StepFunc, error) {
		f.OSCacheLimitSet = cmd.Flags().Changed("os-cache-limit")
		return runner.PlanIOCal(c, f)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Size, "size", "", "calibration data, e.g. 4GiB (default: 4 times the memory limit of the server, at least 1GiB)")
	fl.StringVar(&f.Jobs, "jobs", runner.IOCalDefaultJobs, fmt.Sprintf("parallel jobs to sweep, each with its own connection (up to %d)", runner.IOCalMaxJobs))
	fl.DurationVar(&f.Point, "point", 8*time.Second, "timed window of each point")
	fl.DurationVar(&f.Warmup, "warmup", time.Second, "unmeasured run before each point")
	fl.DurationVar(&f.MaxLatency, "max-latency", runner.IOCalDefaultMaxLatency, "bound on the mean single-block read latency for max_iops (CALIBRATE_IO's minimum is 10ms)")
	fl.StringVar(&f.Tests, "tests", strings.Join(runner.IOCalDefaultTests, ","), "tests to run: "+strings.Join(runner.IOCalTests, ", "))
	fl.IntVar(&f.ReadsPerCall, "reads-per-call", runner.IOCalDefaultReadsPerCall, fmt.Sprintf("random blocks the server reads in one call of the random test (1 to %d)", runner.IOCalMaxReadsPerCall))
	fl.StringVar(&f.OSCacheLimit, "os-cache-limit", runner.IOCalOSCacheLimit, "bound on the managed server's OS page cache (a memory cgroup); given explicitly it must be applied")
	fl.BoolVar(&f.Keep, "keep", false, "keep the calibration data for a later run of the same --size")
	fl.IntVar(&f.Loaders, "loaders", runner.IOCalDefaultLoaders(), "parallel loaders (and tables) of the calibration data")
	return layer{cmd: cmd, plan: plan}
}
