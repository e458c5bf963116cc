package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/runner"
)

func (a *app) labCommand() *cobra.Command {
	names := make([]string, 0, len(lab.Presets))
	for n := range lab.Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	var presets strings.Builder
	for _, n := range names {
		fmt.Fprintf(&presets, "  %-16s %s\n", n, lab.Presets[n])
	}
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Emulated storage tiers and write-back caches for a study (--lab, target.lab)",
		Long: `The storage lab builds emulated storage under --path, for any running command
(--lab SPEC) or study (target.lab: SPEC), and runs on it:

  file system (ext4 or xfs) -> loop device (direct I/O) -> nbdfuse file
  -> calibra's NBD server, two connections a spindle on a 0600 socket:
     [flash write-back cache] platter latency, spindles
     (or nbdkit, one connection, for rate, error_rate and its cache filter)
  -> the platter (a sparse file PATH/calibra-lab/platter.img)

The platter stays between commands (build once on the lab, run many); the
stack is taken apart when each command ends, on every path; 'calibra clean
--path P' removes the platter and whatever a killed calibra left (mounts,
loop devices, nbdfuse and nbdkit). Needs root, /dev/fuse, loop devices and
nbdkit, nbdfuse (libnbd-bin) and fuse3.

SPEC is PRESET[:KEY=VALUE,...]. Presets:
` + presets.String() + `
Keys: fs=ext4|xfs, size=8G, delay|rdelay|wdelay=8ms, spindles=4 (platter
I/Os at once), rate=BITS/s (200M), error_rate=0.1%,
cache=flash|flash-volatile|writeback|unsafe|none, cache_size=4G,
cache_on_read=true|false, cache_dir=DIR (the fast tier; default /dev/shm),
read_iops=N, write_iops=N, torn=4k|atomic=16k and seed=N (a power cut keeps each
write in flight only up to a random multiple of the unit, seed choosing; on
calibra's own server).

cache=flash is study 002's host flash cache: writes and FLUSH acknowledged
once in a cache file whose block map is journaled (non-volatile: a power cut
keeps it), reads served from it, dirty blocks destaged to the platter in the
background. flash-volatile is the same cache lost at a power cut while still
acknowledging FLUSH. writeback and unsafe are nbdkit's volatile cache filter,
honouring FLUSH (by writing back, block after block) or ignoring it: unsafe
is never written back, not even at a clean stop, so it keeps nothing between
commands (the next command says so).

'calibra lab check' builds a stack, measures its flush rate at queue depth 1
and takes it apart.`,
		Example: `  calibra oltp build --warehouses 2 --lab hdd --path /var/tmp/calibra
  calibra oltp ramp --from 2 --to 16 --step 2 --sla 500ms --lab hdd+flash-cache --path /var/tmp/calibra
  calibra lab check --lab hdd:delay=4ms,fs=xfs --path /var/tmp/calibra
  calibra durability --lab hdd+flash-cache --cycles 5 --path /var/tmp/calibra`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var c runner.Config
	check := &cobra.Command{
		Use:   "check",
		Short: "Build the --lab stack, measure its flush rate, take it apart",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.env().LabCheck(cmd.Context(), c.Path, c.Lab)
		},
	}
	check.Flags().StringVar(&c.Path, "path", ".", "directory under which the lab is built")
	check.Flags().StringVar(&c.Lab, "lab", "", "the stack: PRESET[:KEY=VALUE,...]")
	cmd.AddCommand(check, labServeCommand())
	return cmd
}

// labServeCommand is the lab's NBD server, on the listening Unix socket
// the stack passes it as fd 3; nbdfuse opens several connections to it:
// the platter with its latency and spindles, and the flash cache. Not for
// people: the stack starts it.
func labServeCommand() *cobra.Command {
	var cfg lab.TierConfig
	var tornRecord string
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "The lab's NBD server on the socket at fd 3 (started by the lab)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The stack stops its processes with SIGTERM; this server ends
			// when nbdfuse has closed every connection, after destaging,
			// or dies at a power cut (SIGKILL; SIGUSR1 first for a torn one).
			signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			l, err := net.FileListener(os.NewFile(3, "listener"))
			if err != nil {
				return fmt.Errorf("calibra lab serve takes its socket as fd 3 from the lab: %w", err)
			}
			t, err := lab.OpenTier(cfg)
			if err != nil {
				return err
			}
			if cfg.TornUnit > 0 {
				tearOnSignal(t, tornRecord)
			}
			err = lab.ServeListener(l, t)
			if dirty := t.Dirty(); dirty > 0 {
				fmt.Fprintf(os.Stderr, "calibra lab serve: destaging %d blocks to the platter before exiting\n", dirty)
			}
			return errors.Join(err, t.Close())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Platter, "platter", "", "the backing file")
	f.DurationVar(&cfg.RDelay, "rdelay", 0, "platter read latency")
	f.DurationVar(&cfg.WDelay, "wdelay", 0, "platter write latency")
	f.IntVar(&cfg.Spindles, "spindles", lab.DefaultSpindles, "platter I/Os at once")
	f.StringVar(&cfg.CacheDir, "cache-dir", "", "the flash cache's directory (none when empty)")
	f.Int64Var(&cfg.CacheBytes, "cache-size", lab.DefaultCacheBytes, "the flash cache's capacity in bytes")
	f.BoolVar(&cfg.CacheOnRead, "cache-on-read", false, "keep what is read from the platter in the cache")
	f.BoolVar(&cfg.Volatile, "volatile", false, "lose the cache at a power cut, still acknowledging FLUSH")
	f.Int64Var(&cfg.TornUnit, "torn-unit", 0, "at a torn cut (SIGUSR1) keep each write in flight up to a random multiple of this many bytes (0: no torn cut)")
	f.Uint64Var(&cfg.TornSeed, "torn-seed", 0, "the seed that chooses what a torn cut keeps")
	f.StringVar(&tornRecord, "torn-record", "", "where a torn cut records the writes it tore")
	return cmd
}

// A torn cut waits for this many writes in flight, at most this long: the
// audit asks for it during a checkpoint's writes (durability.cutUnder).
const (
	tornInFlight = 8
	tornWait     = 2 * time.Second
)

// tearOnSignal makes SIGUSR1 the lab's torn power cut: the writes in
// flight torn, the record written, and an exit with nothing destaged. The
// cut comes at the first moment tornInFlight writes are in flight, within
// tornWait of the signal.
func tearOnSignal(t *lab.Tier, record string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		<-sig
		waited := t.AwaitInFlight(tornInFlight, tornWait)
		rec, err := t.TearCut()
		rec.WaitedS = waited.Seconds()
		if err == nil {
			err = lab.WriteTornRecord(record, rec)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "calibra lab serve: torn cut: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}()
}
