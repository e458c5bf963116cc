package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/store"
)

// defaultStoreHelp says where the default store is, for --store's help.
const defaultStoreHelp = "$XDG_DATA_HOME/calibra/results.db or ~/.local/share/calibra/results.db, for root /var/lib/calibra/results.db"

// resolveStore reads --store, else --store-file, else CALIBRA_STORE, else
// the default file, before the command does anything.
func (a *app) resolveStore(cmd *cobra.Command) error {
	source, value := store.OnCommandLine, ""
	flag, file := cmd.Flags().Lookup("store"), cmd.Flags().Lookup("store-file")
	switch {
	case flag != nil && flag.Changed && file != nil && file.Changed:
		return fault.Input("give one of them", "--store and --store-file are both given")
	case flag != nil && flag.Changed:
		value = flag.Value.String()
	case file != nil && file.Changed:
		source = "--store-file " + file.Value.String()
		warnExposed(a.stderr, file.Value.String(), source)
		var p runner.Problems
		if value = runner.ReadDSN(file.Value.String(), source, &p); len(p) > 0 {
			return p[0]
		}
	default:
		if v, ok := os.LookupEnv(store.EnvVar); ok {
			source, value = store.EnvVar, v
		}
	}
	spec, err := store.ParseSpec(source, value)
	if err != nil {
		return err
	}
	a.store = spec
	return nil
}

// record records a finished run directory in the store and returns the
// line the command ends with: where the run was recorded. The run
// directory is the truth: a store that cannot be opened or written makes
// that line a warning, and the command ends as it would have.
func (a *app) record(ctx context.Context, dir string) string {
	if a.store.None {
		return ""
	}
	err := func() error {
		s, err := a.openSpec(ctx, store.Create)
		if err != nil {
			return err
		}
		defer s.Close()
		_, err = s.Record(ctx, dir)
		return err
	}()
	where := strings.TrimSpace("the results store " + a.store.Where())
	if err != nil {
		msg := strings.Join(strings.Fields(err.Error()), " ")
		msg = a.store.Unnamed(msg) // the sentence names the store once
		later := "record it later with"
		if errors.Is(err, store.ErrDamaged) {
			later = "the run directory keeps it: once the store is repaired or replaced, record it with"
		}
		if strings.Contains(msg, a.store.Where()) {
			// The store's own sentence, which names it.
			return results.TerminalLine(fmt.Sprintf("calibra: warning: the run was not recorded: %s; %s 'calibra store import %s'", msg, later, dir))
		}
		return results.TerminalLine(fmt.Sprintf("calibra: warning: the run was not recorded in %s (%s); %s 'calibra store import %s'", where, msg, later, dir))
	}
	return "recorded in " + where + " (calibra history lists it)"
}

// openSpec opens the store for access and says on stderr what a
// migration did to it.
func (a *app) openSpec(ctx context.Context, access store.Access) (*store.Store, error) {
	s, err := store.OpenSpec(ctx, a.store, access)
	if err == nil && s.Migrated != "" {
		fmt.Fprintln(a.stderr, results.TerminalLine(s.Migrated))
	}
	return s, err
}

// openStore opens the store for the store and history commands; exists
// is false when no store file exists yet (then nothing is made).
func (a *app) openStore(ctx context.Context, access store.Access) (s *store.Store, exists bool, err error) {
	if a.store.None {
		return nil, false, fault.Input("give --store sqlite:PATH, or unset CALIBRA_STORE", "the results store is off (--store none)")
	}
	s, err = a.openSpec(ctx, access)
	if errors.Is(err, store.ErrNoStore) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

func (a *app) storeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Record run directories in the results store, and check it against them",
		Long: `The results store (--store, CALIBRA_STORE; docs/store.md) lists every run a
command wrote, with its figures, verdicts and warnings. Every command that
writes a run directory records it when the run ends; these commands record
older run directories and check that the store and the directories agree.`,
	}
	imp := &cobra.Command{
		Use:   "import RUNDIR...",
		Short: "Record existing run directories in the results store",
		Long: `Record run directories in the results store, each by its run id (the
directory's name and start time): importing a run again replaces its record.
Every directory is read first; one without a valid results.json is refused
and nothing is recorded.`,
		Example: `  calibra store import calibra-runs/*`,
		Args:    wantArgs(1, -1, "the run directories to record"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every directory is read before the store is opened (or made).
			runs, err := store.Read(args)
			if err != nil {
				return err
			}
			s, _, err := a.openStore(cmd.Context(), store.Create)
			if err != nil {
				return err
			}
			defer s.Close()
			ids, err := s.Write(cmd.Context(), runs)
			if err != nil {
				return err
			}
			for i, id := range ids {
				// A run's id and directory are named by whoever wrote it.
				fmt.Fprintln(a.stdout, results.TerminalLine(fmt.Sprintf("recorded %s (%s)", id, args[i])))
			}
			return nil
		},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check that every recorded run's directory still exists and agrees with the store",
		Long: `Check the results store: a SQLite file must pass SQLite's integrity check
(a damaged one is named with its remedy, exit 2), and every run's directory
must still exist with results.json at the recorded status and number of
figures. Each disagreement is printed; the exit code is 1 when there is any.
It only reads the store, which may lie on a read-only file system.`,
		Example: `  calibra store check`,
		Args:    wantArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, ok, err := a.openStore(cmd.Context(), store.ReadOnly)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(a.stdout, "no runs recorded yet in %s\n", a.store.Where())
				return nil
			}
			defer s.Close()
			if err := s.CheckFile(cmd.Context()); err != nil {
				return err
			}
			n, bad, err := s.Check(cmd.Context())
			if err != nil {
				return s.Explain(err)
			}
			for _, d := range bad {
				fmt.Fprintln(a.stdout, results.TerminalLine(d.String()))
			}
			if len(bad) > 0 {
				return fmt.Errorf("%d of %d recorded runs disagree with their run directories", len(bad), n)
			}
			fmt.Fprintf(a.stdout, "%d recorded runs agree with their run directories\n", n)
			return nil
		},
	}
	cmd.AddCommand(imp, check, a.acceptCommand())
	return cmd
}

func (a *app) acceptCommand() *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "accept RUN",
		Short: "Take a run that regressed against its baseline into later baselines",
		Long: `--baseline never takes a run that regressed against its own baseline, so a
slower night cannot become the normal that hides the next one. When the
change was meant (new storage, a new setting), accept the run: later
baselines take it, and history and serve show who accepted it and when.
RUN is the run's id (calibra history --format csv lists them) or its
directory.`,
		Example: `  calibra store accept calibra-runs/20261128T020000Z_nightly`,
		Args:    wantArgs(1, 1, "the run to accept"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if st, err := os.Stat(id); err == nil && st.IsDir() {
				runs, err := store.Read(args)
				if err != nil {
					return err
				}
				id = runs.IDs()[0]
			}
			if by == "" {
				return fault.Input("give --by NAME", "calibra cannot tell who accepts the run (no user name)")
			}
			s, ok, err := a.openStore(cmd.Context(), store.ReadWrite)
			if err != nil {
				return err
			}
			if !ok {
				return fault.Input("give the --store the run was recorded in", "the results store %s holds no run yet", a.store.Where())
			}
			defer s.Close()
			now := time.Now().UTC()
			if err := s.Accept(cmd.Context(), id, by, now); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, results.TerminalLine(fmt.Sprintf("accepted %s into later baselines (by %s, %s)", id, by, now.Format(time.RFC3339))))
			return nil
		},
	}
	cmd.Flags().StringVar(&by, "by", currentUser(), "who accepts the run, as history and serve show it")
	return cmd
}

// currentUser is the account's name, "" when it has none.
func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func (a *app) historyCommand() *cobra.Command {
	var q store.Query
	var asJSON bool
	var format, since, until string
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the recorded runs, or follow one figure across them with --metric",
		Long: `List the runs in the results store, newest first: when each started, its
label, status, engine, storage and host, its headline figures (each kind of
step's first, repeats aggregated) and its thresholds.

With --metric (a figure as --threshold names it: KIND.METRIC, e.g.
oltp.nopm) it prints that figure's trend instead: for each label on each
target (host and storage path), oldest first, every run's median of its
repeats with their minimum, maximum and number. Only runs that measured the
figure are listed.

The filters narrow the runs: --label, --storage (the path or its device)
and --study (its name or preset) are globs (* ? [...]); --since and --until
take a time (2026-03-02, 2026-03-02T14:00:00Z) or an age (36h, 7d).`,
		Example: `  calibra history --label 'array-*' --metric oltp.nopm
  calibra history --study quick --since 7d --status complete
  calibra history --storage '/mnt/array*' --format md > runs.md
  calibra history --limit 0 --format csv > runs.csv`,
		Args: wantArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				if cmd.Flags().Changed("format") && format != "json" {
					return fault.Input("give one of them", "--json and --format %s are both given", format)
				}
				format = "json"
			}
			if err := checkHistory(&q, format, since, until); err != nil {
				return err
			}
			return a.printHistory(cmd.Context(), q, format)
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Label, "label", "", "only runs whose label matches this glob, e.g. 'array-*'")
	f.StringVar(&q.Metric, "metric", "", "follow this figure across the runs, as --threshold names it (KIND.METRIC, e.g. oltp.nopm)")
	f.IntVar(&q.Limit, "limit", 20, "at most this many runs, newest first (0: every run)")
	f.StringVar(&q.Engine, "engine", "", "only runs on this engine, as results.json names it ("+strings.Join(runner.EngineNames(), ", ")+")")
	f.StringVar(&q.Storage, "storage", "", "only runs whose storage path or device matches this glob, e.g. '/mnt/array*' or /dev/nvme0n1")
	f.StringVar(&q.Study, "study", "", "only runs of a study or preset whose name matches this glob, e.g. quick")
	f.StringVar(&q.Status, "status", "", "only runs that ended so: complete, failed or interrupted")
	f.StringVar(&since, "since", "", "only runs started at or after this time (2026-03-02, 2026-03-02T14:00:00Z) or age (36h, 7d)")
	f.StringVar(&until, "until", "", "only runs started before this time or age")
	f.StringVar(&format, "format", "text", "output on stdout: "+strings.Join(store.Formats, ", "))
	f.BoolVar(&asJSON, "json", false, "the same as --format json")
	return cmd
}

// printHistory prints the runs q selects, or with q.Metric that figure's
// trend, in format.
func (a *app) printHistory(ctx context.Context, q store.Query, format string) error {
	s, ok, err := a.openStore(ctx, store.ReadOnly)
	if err != nil {
		return err
	}
	if ok {
		defer s.Close()
	}
	if q.Metric != "" {
		var series []store.Series
		if ok {
			if series, err = s.Trend(ctx, q); err != nil {
				return s.Explain(err)
			}
		}
		if len(series) == 0 && format != "json" {
			fmt.Fprintf(a.stdout, "no runs recorded in %s match\n", a.store.Where())
			return nil
		}
		return store.WriteTrend(a.stdout, format, series)
	}
	var rows []store.Row
	if ok {
		if rows, err = s.History(ctx, q); err != nil {
			return s.Explain(err)
		}
	}
	if len(rows) == 0 && format != "json" {
		fmt.Fprintf(a.stdout, "no runs recorded in %s match\n", a.store.Where())
		return nil
	}
	return store.WriteRuns(a.stdout, format, rows)
}

// checkHistory checks history's flags and fills q's times.
func checkHistory(q *store.Query, format, since, until string) error {
	if !slices.Contains(store.Formats, format) {
		return fault.Input("use "+strings.Join(store.Formats, ", "), "--format %q is not a history format", format)
	}
	for _, g := range []struct{ flag, value string }{{"--label", q.Label}, {"--storage", q.Storage}, {"--study", q.Study}} {
		if _, err := path.Match(g.value, ""); err != nil {
			return fault.Input("use * ? and [...] as a shell does, e.g. 'array-*'", "%s %q is not a glob", g.flag, g.value)
		}
	}
	if q.Metric != "" {
		if err := store.CheckMetric("--metric", q.Metric); err != nil {
			return err
		}
	}
	if q.Limit < 0 {
		return fault.Input("give 1 or more, or 0 for every run", "--limit %d is negative", q.Limit)
	}
	statuses := []string{results.StatusComplete, results.StatusFailed, results.StatusInterrupted, results.StatusRunning}
	if q.Status != "" && !slices.Contains(statuses, q.Status) {
		return fault.Input("use one of: "+strings.Join(statuses, ", "), "--status %q is not a run's status", q.Status)
	}
	now := time.Now()
	var err error
	if q.Since, err = store.ParseWhen("--since", since, now); err != nil {
		return err
	}
	if q.Until, err = store.ParseWhen("--until", until, now); err != nil {
		return err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return fault.Input("give a --since before the --until", "--since %s is not before --until %s", since, until)
	}
	return nil
}
