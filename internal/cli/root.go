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
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/regress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/store"
)

// app is one invocation's state: its streams and the children it owns.
type app struct {
	stdout, stderr io.Writer
	stderrTTY      bool
	group          *proc.Group
	store          store.Spec // where runs are recorded (--store), set before a command runs
	// baseline, when set, is what run --baseline judges each run against.
	baseline *regress.Options
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
	_ = proc.AdoptOrphans() // best effort: without it a crash's orphans count as another load
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
	// A reader that goes away (calibra ... | head) must not kill calibra
	// mid-run, leaving results.json "running" and the cleanup undone: with
	// SIGPIPE caught (and dropped), a write to the closed pipe returns
	// EPIPE and the run goes on to its end. Caught rather than ignored, it
	// is not ignored in the servers and tools calibra starts.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
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

	defer devProfiles()()
	root := a.rootCommand()
	markRunErrors(root)
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
		// cobra's own errors: unknown command or flag, wrong arguments;
		// its suggestions join the sentence.
		msg, hint, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n\nDid you mean this?\n")
		if hint = strings.Join(strings.Fields(hint), " or "); hint != "" {
			msg += " (did you mean " + hint + "?)"
		}
		err = fault.Input("run 'calibra --help' for the commands and their flags", "%s", msg)
	}
	code := fault.Code(err)
	if ctx.Err() != nil && code != fault.ExitInput {
		code = fault.ExitInterrupted
	}
	if code != fault.ExitInterrupted {
		// An error may quote a label, a path or a directory's name a run
		// from elsewhere holds.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "calibra: %s\n", results.TerminalLine(line))
		}
	}
	return code
}

// markRunErrors marks every error a command's RunE returns as a run-time
// error, so that only cobra's own (flags, arguments, unknown commands) are
// taken for usage errors: an unexpected failure exits 1, not 2 with a
// --help hint.
func markRunErrors(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error { return wrap(run(c, args)) }
	}
	for _, sub := range cmd.Commands() {
		markRunErrors(sub)
	}
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "calibra",
		Short: "Measure how a database performs on a storage configuration, and prove it",
		Long: `calibra runs the layered storage study of the published database storage
papers on the storage you point it at: the device (fio), I/O through the
database, TPC-C-like transactions and TPC-H-like decision support. It starts
a throwaway instance of the database (--engine) with its data on that storage (or uses yours
with --dsn), measures each layer over a timed window from real counters, and
writes results.json and a report to a run directory.`,
		Example: `  # Build 2 warehouses on the storage under test, then a 5-minute timed run
  calibra oltp build --warehouses 2 --path /mnt/array
  calibra oltp run --warehouses 2 --users 8 --rampup 1m --duration 5m --path /mnt/array

  # The same against an existing server
  calibra oltp run --dsn ` + runner.ExampleDSN() + ` --users 16

  # Remove the managed instance from the storage under test
  calibra clean --path /mnt/array`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// A password on the command line shows in ps to every local account.
	root.PersistentFlags().String("store", "", "the results store every run is recorded in: "+store.Forms+" (its password from "+store.PasswordSources+"), or none (default: $"+store.EnvVar+", else "+defaultStoreHelp+"; docs/store.md)")
	root.PersistentFlags().String("store-file", "", store.StoreFileHelp)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.resolveStore(cmd); err != nil {
			return err
		}
		if f := cmd.Flags().Lookup("dsn"); f != nil && f.Changed && secret.RedactDSN(f.Value.String()) != f.Value.String() {
			fmt.Fprintln(a.stderr, "calibra: warning: the password in --dsn shows in ps to every local account; give it in a --dsn-file instead"+runner.PasswordSources())
		}
		if f := cmd.Flags().Lookup("dsn-file"); f != nil && f.Changed && f.Value.String() != "" {
			warnExposed(a.stderr, f.Value.String(), "--dsn-file "+f.Value.String())
		}
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A flag that checks its own value says what is wrong and the fix.
		var in *fault.InputError
		if errors.As(err, &in) {
			return in
		}
		return fault.Input(fmt.Sprintf("run '%s --help' for its flags", c.CommandPath()), "%v", err)
	})
	root.AddCommand(a.runCommand(), a.planCommand(), a.versionCommand(), a.oltpCommand(), a.cleanCommand(), a.deviceCommand(), a.iocalCommand(),
		a.dssCommand(), a.reportCommand(), a.compareCommand(), a.mergeCommand())
	root.AddCommand(a.labCommand(), a.durabilityCommand(), a.storeCommand(), a.historyCommand(), a.serveCommand(), a.profileCommand())
	for _, cmd := range root.Commands() {
		if cmd.HasSubCommands() && !cmd.Runnable() {
			group(cmd)
		}
	}
	return root
}

// group makes cmd (oltp, dss, lab) answer a subcommand it does not have
// with an error; cobra would print its help and exit 0. Bare, it still
// prints its help.
func group(cmd *cobra.Command) {
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownCommand(c, args[0])
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}

// unknownCommand names an unknown subcommand of cmd in one sentence, with
// cobra's suggestions.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return fault.Input(fmt.Sprintf("run '%s --help' for its commands", cmd.CommandPath()), "%s", msg)
}

// wrap marks an error as a run-time one (see runError).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return runError{err}
}

// noArgs refuses arguments to a command that takes only flags (cobra's
// own NoArgs calls them an unknown command).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fault.Input(fmt.Sprintf("give its settings as flags ('%s --help' lists them)", cmd.CommandPath()),
		"%s takes no arguments, but was given %q", cmd.CommandPath(), strings.Join(args, " "))
}

// wantArgs accepts least to most arguments (most < 0: no bound), which
// are what says (as "one run directory").
func wantArgs(least, most int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= least && (most < 0 || len(args) <= most) {
			return nil
		}
		return fault.Input(fmt.Sprintf("see '%s --help'", cmd.CommandPath()), "%s takes %s, but was given %d", cmd.CommandPath(), what, len(args))
	}
}

// devProfiles starts a developer's aids for the hot paths, from the
// environment: CALIBRA_CPUPROFILE=FILE, and CALIBRA_MUTEXPROFILE=FILE and
// CALIBRA_ALLOCPROFILE=FILE (every contended lock and every allocation
// sampled, written at the end); it returns what ends them.
func devProfiles() func() {
	var ends []func()
	if path := os.Getenv("CALIBRA_CPUPROFILE"); path != "" {
		if f, err := safefs.CreateOutput(path, 0o644); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				ends = append(ends, func() { pprof.StopCPUProfile(); f.Close() })
			}
		}
	}
	for _, p := range []struct{ env, name string }{{"CALIBRA_MUTEXPROFILE", "mutex"}, {"CALIBRA_ALLOCPROFILE", "allocs"}} {
		path := os.Getenv(p.env)
		if path == "" {
			continue
		}
		if p.name == "mutex" {
			runtime.SetMutexProfileFraction(1)
		} else {
			runtime.MemProfileRate = 1
		}
		ends = append(ends, func() {
			if p.name == "allocs" {
				// The profile holds the allocations up to the last
				// collection: a run that allocates little has none since
				// its start without this one.
				runtime.GC()
			}
			if f, err := safefs.CreateOutput(path, 0o644); err == nil {
				_ = pprof.Lookup(p.name).WriteTo(f, 0)
				f.Close()
			}
		})
	}
	return func() {
		for _, end := range ends {
			end()
		}
	}
}
