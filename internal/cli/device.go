package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

// deviceCommand is the device layer as a command: --path may name several
// targets, and the database flags are hidden.
func (a *app) deviceCommand() *cobra.Command {
	var f *runner.Device
	cmd := a.command(func(c *runner.Config) layer {
		l := a.deviceLayer(c)
		f = l.flags
		return l.layer
	})
	fl := cmd.Flags()
	pathFlag := fl.Lookup("path")
	pathFlag.Value = &f.Paths
	pathFlag.Usage = "storage under test: a directory, an existing file or a block device; repeat or comma-separate for several targets"
	// The device layer needs no database.
	for _, name := range []string{"dsn", "dsn-file", "run-as", "db-cache"} {
		_ = fl.MarkHidden(name)
	}
	for _, o := range runner.EngineOptions() {
		_ = fl.MarkHidden(o.Flag)
	}
	return cmd
}

// deviceLong is the device command's help.
const deviceLong = `Run the studies' device tests on the storage under test with fio: each access
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
  custom         ` + runner.DeviceSpecSyntax + `
                 e.g. oltp16k:bs=16k,read=70,random=100; read and random
                 default to 100, align to the block size (at most 4 KiB)

Per point: IOPS, MB/s (10^6 bytes per second), completion latency (fio's
clat: submission to completion) mean, p50, p99, p99.9, p99.99 and max in µs
from fio's histogram, and I/O errors (fio counts them and goes on). With
--repeat N each point is the mean of N runs, with their spread. Per spec,
the answer to "how many IOPS within --max-latency?": the highest IOPS whose
p99 stays at or under it, and for each of --p99-bounds (1 ms and 5 ms) the
same answer over the sweep of outstanding I/O (workers x qd).

By default each point is one run on a region written once: fresh out of box,
a first look. --steady-state follows the SNIA PTS: each region is written
twice over in 128 KiB sequential writes, then each point runs in rounds of
--runtime until its last 5 rounds' IOPS have a range within 20% of their mean
and a least-squares line whose excursion is within 10%, or --steady-max-rounds
are done; the point's figures are those 5 rounds'.

Direct I/O (O_DIRECT) is the default; a file system that refuses it (ramfs,
tmpfs before Linux 6.6, some FUSE) is refused with exit 2 unless you ask for
buffered I/O with --direct=false, which measures the page cache too. The
ioengine is io_uring, else libaio, else psync: the first that a short probe
finds working is used and recorded. Every fio job file, JSON report and log
is kept under RUNDIR/raw/, with each run's IOPS per second (fio's
write_iops_log): a point whose rate fell during a run and stayed down is
flagged as a burst.`

type deviceLayer struct {
	layer
	flags *runner.Device
}

func (a *app) deviceLayer(c *runner.Config) deviceLayer {
	f := &runner.Device{}
	cmd := &cobra.Command{
		Use:   "device",
		Short: "Layer 1: the storage alone, through fio (IOPS, MB/s and latency per queue depth)",
		Long:  deviceLong,
		Example: `  # The four Iometer specs over queue depths 1 to 32 on a mounted array
  calibra device --path /mnt/array

  # Two specs, a short sweep, 256 MiB per worker
  calibra device --path /mnt/array --specs 4k-randread,1m-seqwrite --qd 1,4 --runtime 3s --ramp 1s --size 256MiB

  # Two LUNs at once, 8 workers each, 3 repeats, IOPS within 2 ms
  calibra device --path /mnt/lun1,/mnt/lun2 --workers 8 --repeat 3 --max-latency 2ms

  # Steady state, the PTS way: 1-minute rounds until the window holds
  calibra device --path /mnt/array --specs 8k-randwrite --qd 1,8,32 --steady-state --runtime 60s --ramp 0s

  # A raw device (its contents are lost)
  calibra device --path /dev/nvme1n1 --allow-destroy /dev/nvme1n1 --specs 8k-randrw70,oltp16k:bs=16k,read=70`,
	}
	plan := func(ctx context.Context) (runner.Needs, runner.StepFunc, error) {
		return runner.PlanDevice(ctx, c, f)
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Specs, "specs", runner.DeviceDefaultSpecs, "access specs, built-in names or custom "+runner.DeviceSpecSyntax)
	fl.StringVar(&f.QDs, "qd", runner.DeviceDefaultQDs, "queue depths to sweep, per worker")
	fl.IntVar(&f.Workers, "workers", 1, "workers per target, each on its own file or region")
	fl.StringVar(&f.Size, "size", "1GiB", "bytes per worker, e.g. 256MiB or 4GiB (a multiple of 4 KiB)")
	fl.DurationVar(&f.Ramp, "ramp", 5*time.Second, "warm-up of each run, not measured")
	fl.DurationVar(&f.Runtime, "runtime", 30*time.Second, "timed window of each run (1s or more)")
	fl.IntVar(&f.Repeat, "repeat", 1, "runs of each point; the point is their mean, with the spread")
	fl.DurationVar(&f.MaxLatency, "max-latency", time.Millisecond, "latency bound: per spec, the highest IOPS whose p99 stays at or under it")
	fl.StringVar(&f.P99Bounds, "p99-bounds", runner.DeviceP99Bounds, "latency bounds: per spec, the highest IOPS whose p99 stays at or under each (iops_at_p99)")
	fl.StringVar(&f.Engine, "ioengine", "auto", "fio ioengine: auto (io_uring, else libaio, else psync), io_uring, libaio or psync")
	fl.BoolVar(&f.Direct, "direct", true, "direct I/O (O_DIRECT), bypassing the page cache")
	fl.StringVar(&f.Fio, "fio", "", "fio program to run (default: fio on PATH)")
	fl.StringSliceVar(&f.AllowDestroy, "allow-destroy", nil, "file or block device given to --path that calibra may overwrite")
	fl.BoolVar(&f.SteadyState, "steady-state", false, "precondition (2x each region in 128 KiB sequential writes), then run each point in rounds of --runtime until the SNIA PTS steady state holds")
	fl.IntVar(&f.SteadyMaxRounds, "steady-max-rounds", runner.DeviceSteadyRounds, "with --steady-state, the rounds a point may take before it is reported as not steady (5 or more)")
	return deviceLayer{layer: layer{cmd: cmd, plan: plan}, flags: f}
}
