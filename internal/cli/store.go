package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
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
		s, err := store.OpenSpec(ctx, a.store, true)
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
		return fmt.Sprintf("calibra: warning: the run was not recorded in %s (%s); record it later with 'calibra store import %s'", where, msg, dir)
	}
	return "recorded in " + where + " (calibra history lists it)"
}

// openStore opens the store for the store and history commands; exists
// is false when no store file exists yet (then nothing is made).
func (a *app) openStore(ctx context.Context, create bool) (s *store.Store, exists bool, err error) {
	if a.store.None {
		return nil, false, fault.Input("give --store sqlite:PATH, or unset CALIBRA_STORE", "the results store is off (--store none)")
	}
	s, err = store.OpenSpec(ctx, a.store, create)
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
			s, _, err := a.openStore(cmd.Context(), true)
			if err != nil {
				return err
			}
			defer s.Close()
			ids, err := s.Write(cmd.Context(), runs)
			if err != nil {
				return err
			}
			for i, id := range ids {
				fmt.Fprintf(a.stdout, "recorded %s (%s)\n", id, args[i])
			}
			return nil
		},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check that every recorded run's directory still exists and agrees with the store",
		Long: `Check every run in the results store: its run directory must still exist
and its results.json must have the recorded status and number of figures.
Each disagreement is printed; the exit code is 1 when there is any.`,
		Example: `  calibra store check`,
		Args:    wantArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, ok, err := a.openStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(a.stdout, "no runs recorded yet in %s\n", a.store.Where())
				return nil
			}
			defer s.Close()
			n, bad, err := s.Check(cmd.Context())
			if err != nil {
				return err
			}
			for _, d := range bad {
				fmt.Fprintln(a.stdout, d)
			}
			if len(bad) > 0 {
				return fmt.Errorf("%d of %d recorded runs disagree with their run directories", len(bad), n)
			}
			fmt.Fprintf(a.stdout, "%d recorded runs agree with their run directories\n", n)
			return nil
		},
	}
	cmd.AddCommand(imp, check)
	return cmd
}

func (a *app) historyCommand() *cobra.Command {
	var q store.Query
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the recorded runs, newest first, with one figure when --metric names it",
		Long: `List the runs in the results store, newest first: when each started, its
label, status, engine and host, and with --metric the named figure (as
--threshold names it: KIND.METRIC, e.g. oltp.nopm), the median of the run's
steps when it measured it more than once. With --metric only the runs that
measured it are listed.`,
		Example: `  calibra history --label 'array-*' --metric oltp.nopm
  calibra history --limit 5 --json`,
		Args: wantArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := path.Match(q.Label, ""); err != nil {
				return fault.Input("use * ? and [...] as a shell does, e.g. 'array-*'", "--label %q is not a glob", q.Label)
			}
			if q.Metric != "" {
				if err := store.CheckMetric("--metric", q.Metric); err != nil {
					return err
				}
			}
			if q.Limit < 0 {
				return fault.Input("give 1 or more, or 0 for every run", "--limit %d is negative", q.Limit)
			}
			s, ok, err := a.openStore(cmd.Context(), false)
			if err != nil {
				return err
			}
			var rows []store.Row
			if ok {
				defer s.Close()
				if rows, err = s.History(cmd.Context(), q); err != nil {
					return err
				}
			}
			if asJSON {
				if rows == nil {
					rows = []store.Row{}
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(a.stdout, "no runs recorded in %s match\n", a.store.Where())
				return nil
			}
			writeHistory(a.stdout, rows, q.Metric)
			return nil
		},
	}
	cmd.Flags().StringVar(&q.Label, "label", "", "only runs whose label matches this glob, e.g. 'array-*'")
	cmd.Flags().StringVar(&q.Metric, "metric", "", "show this figure, as --threshold names it (KIND.METRIC, e.g. oltp.nopm)")
	cmd.Flags().IntVar(&q.Limit, "limit", 20, "at most this many runs, newest first (0: every run)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as JSON")
	return cmd
}

// writeHistory prints the runs as a table.
func writeHistory(w interface{ Write([]byte) (int, error) }, rows []store.Row, metric string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "STARTED (UTC)\tLABEL\tSTATUS\tENGINE\tHOST"
	if metric != "" {
		head += "\t" + strings.ToUpper(metric)
	}
	fmt.Fprintln(tw, head)
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for _, r := range rows {
		engine := r.Engine
		if v := strings.Fields(r.EngineVersion); len(v) > 0 {
			engine += " " + v[0] // "15.18", without the distribution's words
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.StartedAt.UTC().Format("2006-01-02 15:04:05"), dash(r.Label), r.Status, dash(engine), dash(r.Host))
		if metric != "" {
			v := "-"
			if m := r.Metric; m != nil {
				v = strings.TrimSpace(formatValue(m.Value) + " " + m.Unit)
				if m.N > 1 {
					v += fmt.Sprintf(" (median of %d)", m.N)
				}
			}
			line += "\t" + v
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// formatValue prints a figure with two decimals at most.
func formatValue(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
