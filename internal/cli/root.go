// Package cli is calibra's command line: the commands, their flags and help,
// signal handling, and the one mapping from errors to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
)

// Version is calibra's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// app is one invocation's state: its streams and the children it owns.
type app struct {
	stdout, stderr io.Writer
	stderrTTY      bool
	group          *proc.Group
}

// runError marks errors that come from running a command, as opposed to
// cobra's own parsing errors, which are usage errors.
type runError struct{ err error }

func (e runError) Error() string { return e.err.Error() }
func (e runError) Unwrap() error { return e.err }

// Main runs calibra with args and returns the exit code. The first SIGINT or
// SIGTERM (or SIGHUP, SIGQUIT) cancels the run, which then stops its load
// and its children and keeps what it measured; a second one kills the
// children at once and a third exits without finishing.
func Main(args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, group: proc.NewGroup()}
	if f, ok := stderr.(*os.File); ok {
		a.stderrTTY = term.IsTerminal(int(f.Fd()))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SIGHUP (a closed terminal) and SIGQUIT end a run as Ctrl-C does. A
	// second signal kills the children at once, but the run still writes
	// its final status, report and cleanup; only a third exits on the spot.
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(stderr, "\ncalibra: interrupted; stopping the load and keeping what was measured (signal again to stop at once)")
		cancel()
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(stderr, "calibra: stopping every process now; writing the results (signal a third time to exit without them)")
		a.group.KillAll()
		if _, ok := <-sigs; ok {
			os.Exit(fault.ExitInterrupted)
		}
	}()

	// A developer's aid for the hot paths: CALIBRA_CPUPROFILE=FILE.
	if path := os.Getenv("CALIBRA_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	_ = a.group.StopAll(defaultStopGrace)
	if err == nil {
		return fault.ExitOK
	}
	var re runError
	var in *fault.InputError
	if !errors.As(err, &re) && !errors.As(err, &in) {
		// cobra's own errors: unknown command or flag, wrong arguments.
		err = fault.Input("run 'calibra --help' for the commands and their flags", "%s", strings.TrimSuffix(err.Error(), "\n"))
	}
	code := fault.Code(err)
	if ctx.Err() != nil && code != fault.ExitInput {
		code = fault.ExitInterrupted
	}
	if code != fault.ExitInterrupted {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "calibra: %s\n", line)
		}
	}
	return code
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "calibra",
		Short: "Measure how a database performs on a storage configuration, and prove it",
		Long: `calibra runs the layered storage study of the published database storage
papers on the storage you point it at: the device (fio), I/O through the
database, TPC-C-like transactions and TPC-H-like decision support. It starts
a throwaway PostgreSQL instance with its data on that storage (or uses yours
with --dsn), measures each layer over a timed window from real counters, and
writes results.json and a report to a run directory.`,
		Example: `  # Build 2 warehouses on the storage under test, then a 5-minute timed run
  calibra oltp build --warehouses 2 --path /mnt/array
  calibra oltp run --warehouses 2 --users 8 --rampup 1m --duration 5m --path /mnt/array

  # The same against an existing server
  calibra oltp run --dsn postgres://bench@db1:5432/bench --users 16

  # Remove the managed instance from the storage under test
  calibra clean --path /mnt/array`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fault.Input(fmt.Sprintf("run '%s --help' for its flags", c.CommandPath()), "%v", err)
	})
	root.AddCommand(a.runCommand(), a.planCommand(), a.versionCommand(), a.oltpCommand(), a.cleanCommand(), a.deviceCommand(), a.iocalCommand(),
		a.dssCommand(), a.reportCommand(), a.compareCommand())
	root.AddCommand(a.labCommand(), a.durabilityCommand())
	return root
}

// wrap marks an error as a run-time one (see runError).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return runError{err}
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print calibra's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(a.stdout, "calibra %s\n", Version)
			return nil
		},
	}
}
