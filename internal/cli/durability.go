package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) durabilityCommand() *cobra.Command {
	var c runner.Config
	var d runner.Durability
	cmd := &cobra.Command{
		Use:   "durability",
		Short: "The power-loss audit: are commits the database acknowledged still there after power fails?",
		Long: `Clients run the TPC-C-like New-Order and Payment on the managed instance
(built with --warehouses when it holds no build) and journal each one (the
order's id in its district, the customer paid; in the run directory,
raw/durability-acks.txt) only after its COMMIT returned. Under that load the
power is cut; the machine recovers; every journaled commit must still be
there, and the TPC-C consistency conditions must hold. Per cycle:
acknowledged commits, acknowledged-then-lost ones (the violation),
committed-but-unacknowledged ones (in flight at the cut; allowed), the
recovery time and the consistency conditions.

On a lab stack (--lab) a power cut is SIGKILL of the lab's NBD server
first (a volatile cache dies with it; the flash cache keeps its journaled
contents), then of every server process; then the file system check,
mount and the server's crash recovery. Without --lab only the server is
killed: the OS page cache survives, so that tests the database's crash
recovery, not the storage (a missing fsync goes unseen).

--unsafe-fsync-off is the calibration: the same audit with commits not
flushed (the engine's own setting for it, named in results.json's
unsafe_settings), which
must show losses on a lab, proving the harness can see one. Each cycle is
classed (durable, in-flight, lost-acknowledged, corrupt, files-gone,
no-restart); a recovery that fails ends the audit, and the run fails when
cycles remain unrun. A flush-rate
probe (8 KiB write+fdatasync at queue depth 1) flags a volatile write cache.
A threshold such as 'durability.lost_acknowledged == 0' makes a loss exit 3.

After each recovery the pages are checked too, on every node of a cluster
(the engine's own page check, with page checksums on the audit's own
instance on a lab; results.json's page_check names it); a recovered server
with a damaged page is a torn-page cycle.
On a lab whose cut tears writes (--lab hdd:torn=4k, atomic=16k; seed=N
replays the choices) the cut comes during a checkpoint, and each cut's torn
writes are recorded in raw/torn-cut-N.json. --page-protection off turns
off the engine's torn-page protection (its setting named in results.json's
page_protection; not on a cluster); --matrix
runs both settings against a torn 4 KiB and an atomic 16 KiB cut, --cycles
each, and says in one table what each cost and found.`,
		Example: `  calibra durability --lab hdd+flash-cache --cycles 5 --path /var/tmp/calibra \
      --threshold 'durability.lost_acknowledged == 0'
  calibra durability --lab hdd+flash-cache --cycles 2 --unsafe-fsync-off --path /var/tmp/calibra
  calibra durability --lab hdd:torn=4k --page-protection off --path /var/tmp/calibra
  calibra durability --lab hdd --matrix --cycles 3 --path /var/tmp/calibra
  calibra durability --path /mnt/array      # server crash only: not a test of the device`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			needs, body, done, err := a.env().PlanDurability(cmd.Context(), &c, d)
			if err != nil {
				return err
			}
			defer done()
			return a.run(cmd, &c, needs, body)
		},
	}
	registerCommon(cmd, &c)
	registerLive(cmd, &c.Live)
	f := cmd.Flags()
	f.IntVar(&d.Clients, "clients", 4, "clients committing at once")
	f.IntVar(&d.Cycles, "cycles", 3, "load, power cut and recovery cycles")
	f.IntVar(&d.Warehouses, "warehouses", 1, "TPC-C-like warehouses to build when the instance holds no build")
	f.DurationVar(&d.Load, "load", 10*time.Second, "commits before each power cut")
	f.StringVar(&d.PageProtection, "page-protection", "on", "the engine's torn-page protection (a full page image in the log, a doublewrite buffer): on, or off")
	f.BoolVar(&d.Matrix, "matrix", false, "the torn-write matrix on a --lab: page protection on and off against a torn 4 KiB and an atomic 16 KiB cut, --cycles each, with what each setting wrote")
	f.BoolVar(&d.FsyncOff, "unsafe-fsync-off", false, "calibration: run the server with commits not flushed (fsync=off or its engine's equivalent), which must lose commits on a lab")
	f.StringArrayVar(&d.Thresholds, "threshold", nil, "e.g. 'durability.lost_acknowledged == 0' (exit 3 when it fails; repeatable)")
	return cmd
}
