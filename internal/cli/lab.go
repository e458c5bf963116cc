package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/observe"
)

// labUp builds the stack --lab asks for under --path and points the
// session at its file system: the path, the storage record and, for a
// throttled stack, the block-I/O limits on its loop device.
func (a *app) labUp(ctx context.Context, c *common, needs *sessionNeeds) (*lab.Stack, error) {
	if c.dsn != "" && needs.database {
		return nil, fault.Input("drop --dsn, or drop --lab", "--lab builds storage for the managed instance, and --dsn names another server")
	}
	parts, err := lab.Parse(c.lab)
	if err != nil {
		return nil, err
	}
	if err := checkPath(c.path, 0, "the lab"); err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stderr, "calibra: building the storage lab %s under %s\n", parts.Spec, c.path)
	stack, err := lab.Up(ctx, c.path, parts, a.group)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.stderr, "calibra: lab up: %s, mounted at %s\n", parts.Chain(), stack.Mount)
	c.path = stack.Mount
	// Whatever the command resolved from --path, it now runs on the lab.
	st := observe.Storage(stack.Mount)
	st.Lab = stack.Record()
	needs.storage = &st
	if parts.ReadIOPS > 0 || parts.WriteIOPS > 0 {
		if needs.limits == nil {
			needs.limits = &limitsNeed{required: true, fix: "run as root on a machine with the blkio cgroup controller, or choose another lab preset"}
		}
		needs.limits.spec.ReadIOPS, needs.limits.spec.WriteIOPS = parts.ReadIOPS, parts.WriteIOPS
	}
	if needs.limits != nil {
		needs.limits.spec.Path = stack.Mount
	}
	return stack, nil
}

// labParse checks a lab spec ("" is no lab).
func labParse(spec string) (lab.Parts, error) {
	if spec == "" {
		return lab.Parts{}, nil
	}
	return lab.Parse(spec)
}

// labDown takes the stack apart, saying so when it could not be done
// cleanly ('calibra clean' removes what is left).
func (a *app) labDown(stack *lab.Stack) {
	if err := stack.Down(); err != nil {
		fmt.Fprintf(a.stderr, "calibra: warning: the lab was not taken down cleanly (%v); 'calibra clean --path %s' removes what is left\n",
			err, strings.TrimSuffix(stack.Root, "/"+lab.DirName))
	}
}

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
  -> calibra's NBD server: [flash write-back cache] platter latency, spindles
     (or nbdkit, for rate, error_rate and its cache filter)
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
read_iops=N, write_iops=N.

cache=flash is study 002's host flash cache: writes and FLUSH acknowledged
once in a cache file whose block map is journaled (non-volatile: a power cut
keeps it), reads served from it, dirty blocks destaged to the platter in the
background. flash-volatile is the same cache lost at a power cut while still
acknowledging FLUSH. writeback and unsafe are nbdkit's volatile cache filter,
honouring FLUSH (by writing back, block after block) or ignoring it.

'calibra lab check' builds a stack, measures its flush rate at queue depth 1
and takes it apart.`,
		Example: `  calibra oltp build --warehouses 2 --lab hdd --path /var/tmp/calibra
  calibra oltp ramp --from 2 --to 16 --step 2 --sla 500ms --lab hdd+flash-cache --path /var/tmp/calibra
  calibra lab check --lab hdd:delay=4ms,fs=xfs --path /var/tmp/calibra
  calibra durability --lab hdd+flash-cache --cycles 5 --path /var/tmp/calibra`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var c common
	check := &cobra.Command{
		Use:   "check",
		Short: "Build the --lab stack, measure its flush rate, take it apart",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.lab == "" {
				return fault.Input("give --lab SPEC, e.g. --lab hdd", "calibra lab check needs --lab")
			}
			parts, err := lab.Parse(c.lab)
			if err != nil {
				return err
			}
			if err := checkPath(c.path, 0, "the lab"); err != nil {
				return err
			}
			stack, err := lab.Up(cmd.Context(), c.path, parts, a.group)
			if err != nil {
				return wrap(err)
			}
			defer a.labDown(stack)
			fmt.Fprintf(a.stdout, "lab %s: %s\nmounted at %s on %s", parts.Spec, parts.Chain(), stack.Mount, stack.Device())
			if stack.Fsck != "" {
				fmt.Fprintf(a.stdout, " (file system check: %s)", stack.Fsck)
			}
			fmt.Fprintln(a.stdout)
			fp, err := durability.ProbeFlush(cmd.Context(), stack.Mount, stack.Device())
			if err != nil {
				return wrap(err)
			}
			fmt.Fprintf(a.stdout, "flush probe: %.0f fsyncs/s at queue depth 1 (%.2f ms each): %s\n", fp.FsyncsPerS, fp.LatencyMsMean, fp.Verdict)
			return nil
		},
	}
	check.Flags().StringVar(&c.path, "path", ".", "directory under which the lab is built")
	check.Flags().StringVar(&c.lab, "lab", "", "the stack: PRESET[:KEY=VALUE,...]")
	cmd.AddCommand(check, labServeCommand())
	return cmd
}

// labServeCommand is the lab's NBD server, which nbdfuse runs with the
// connection on its stdin and stdout: the platter with its latency and
// spindles, and the flash cache. Not for people: the stack starts it.
func labServeCommand() *cobra.Command {
	var cfg lab.TierConfig
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "The lab's NBD server on stdin and stdout (started by the lab)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The stack stops nbdfuse's process group with SIGTERM; this
			// server ends when nbdfuse closes the connection, after
			// destaging, or dies at a power cut (SIGKILL).
			signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
			t, err := lab.OpenTier(cfg)
			if err != nil {
				return err
			}
			err = lab.ServeNBD(os.Stdin, os.Stdout, t)
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
	return cmd
}
