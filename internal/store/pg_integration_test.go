//go:build integration

package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// TestMain lets the test binary stand in for calibra, whose commands the
// PostgreSQL test runs as child processes.
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }

// TestPostgresStore: a team's PostgreSQL store on a server calibra does
// not manage (one server for the whole test): made on first use by two
// writers at once that record overlapping runs concurrently, both land,
// once each; history and a trend list them as SQLite's would; two
// calibra commands import at once, one with the password in
// CALIBRA_STORE, the other in PGPASSWORD and --store-file, and show it
// nowhere; a store at schema version 1 migrates; --baseline's query and
// calibra serve's answer as on SQLite.
func TestPostgresStore(t *testing.T) {
	url := store.PGStore(t, "results", "commands", "results_v1", "queries", "locks")
	ctx := context.Background()
	withPassword := func(db string) string {
		return strings.Replace(url(db), "bench@", "bench:"+store.StorePassword+"@", 1)
	}

	t.Run("wrong password", func(t *testing.T) {
		spec, err := store.ParseSpec("CALIBRA_STORE", strings.Replace(withPassword("results"), store.StorePassword, "wrong-"+store.StorePassword, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.OpenSpec(ctx, spec, store.Create)
		if err == nil || strings.Contains(err.Error(), store.StorePassword) || !strings.Contains(err.Error(), "bench:xxxxx@") {
			t.Errorf("a wrong password: %v; want a refusal naming the store without its password", err)
		}
	})

	// Where the URL has none (the rest of this test), the password comes
	// from the environment.
	t.Setenv("PGPASSWORD", store.StorePassword)
	t.Run("concurrent writers", func(t *testing.T) { concurrentWriters(t, withPassword("results"), url("results")) })
	t.Run("two commands at once", func(t *testing.T) { twoCommands(t, withPassword("commands"), url("commands")) })
	t.Run("baseline and serve", func(t *testing.T) { baselineAndServe(t, url("queries")) })
	t.Run("locks held too long", func(t *testing.T) { locksHeld(t, url("locks")) })

	t.Run("from version 1", func(t *testing.T) {
		old, err := store.OpenPostgresAt(ctx, url("results_v1"), 1)
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		s, err := store.OpenSpec(ctx, store.Spec{URL: url("results_v1")}, store.Create)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v := store.Count(t, s, `SELECT max(version) FROM schema_version`); v != store.SchemaVersion {
			t.Errorf("at version %d, want %d", v, store.SchemaVersion)
		}
		if want := fmt.Sprintf("calibra: migrated the results store %s from schema version 1 to %d (new tables accepted, baseline_runs", url("results_v1"), store.SchemaVersion); !strings.HasPrefix(s.Migrated, want) {
			t.Errorf("the migration said %q, want %q first", s.Migrated, want)
		}
		if _, err := s.Record(ctx, store.CopyRun(t, t.TempDir(), "quick")); err != nil {
			t.Error(err)
		}
	})
}

// concurrentWriters: two stores opened at once on a new database, one
// with the password in the URL, the other from PGPASSWORD, import
// overlapping runs three times each.
func concurrentWriters(t *testing.T, withPassword, noPassword string) {
	ctx := context.Background()
	dir := t.TempDir()
	sets := [][]string{{"quick", "oltp-base", "repeats-a"}, {"repeats-b", "device-a", "quick"}}
	specs := []string{withPassword, noPassword}
	var wg sync.WaitGroup
	errs := make(chan error, len(sets))
	for i, set := range sets {
		sub := filepath.Join(dir, fmt.Sprint(i))
		var dirs []string
		for _, name := range set {
			dirs = append(dirs, store.CopyRun(t, sub, name))
		}
		wg.Go(func() {
			s, err := store.OpenSpec(ctx, store.Spec{URL: specs[i]}, store.Create)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for range 3 {
				if _, err := s.Import(ctx, dirs); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	s, err := store.OpenSpec(ctx, store.Spec{URL: noPassword}, store.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.History(ctx, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range rows {
		labels = append(labels, r.Label)
	}
	// quick is two directories of one name and start time: one run.
	if want := []string{"lead-a", "", "base", "repeats-b", "repeats-a"}; !slices.Equal(labels, want) {
		t.Errorf("history lists %q, want %q", labels, want)
	}
	var figures, runs int
	if err := store.DB(s).QueryRow(`SELECT count(*), count(DISTINCT run_id) FROM figures`).Scan(&figures, &runs); err != nil {
		t.Fatal(err)
	}
	sqlite := store.OpenTemp(t)
	var dirs []string
	for _, name := range []string{"quick", "oltp-base", "repeats-a", "repeats-b", "device-a"} {
		dirs = append(dirs, store.CopyRun(t, t.TempDir(), name))
	}
	if _, err := sqlite.Import(ctx, dirs); err != nil {
		t.Fatal(err)
	}
	if want := store.Count(t, sqlite, `SELECT count(*) FROM figures`); figures != want || runs != 5 {
		t.Errorf("%d figures of %d runs, want %d of 5 (each run once)", figures, runs, want)
	}
	q := store.Query{Metric: "oltp.nopm", Label: "repeats-*"}
	pgTrend, err := s.Trend(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	liteTrend, err := sqlite.Trend(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pgTrend) != fmt.Sprint(liteTrend) || len(pgTrend) != 2 || pgTrend[0].Points[0].N < 3 {
		t.Errorf("PostgreSQL's trend %+v, SQLite's %+v", pgTrend, liteTrend)
	}
}

// twoCommands runs two calibra store imports at once as processes, then
// history --json, on a new database.
func twoCommands(t *testing.T, withPassword, noPassword string) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "store")
	if err := os.WriteFile(storeFile, []byte(noPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	calibra := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...) // this binary, standing in for calibra (TestMain)
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "PGPASSWORD=") {
				cmd.Env = append(cmd.Env, e)
			}
		}
		cmd.Env = append(cmd.Env, env...)
		return cmd
	}
	cmds := []*exec.Cmd{
		calibra([]string{"CALIBRA_STORE=" + withPassword}, "store", "import", store.CopyRun(t, dir, "device-a"), store.CopyRun(t, dir, "oltp-base")),
		calibra([]string{"PGPASSWORD=" + store.StorePassword}, "store", "import", "--store-file", storeFile, store.CopyRun(t, dir, "device-b"), store.CopyRun(t, dir, "oltp-xss")),
	}
	outs := make([][]byte, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		wg.Go(func() { outs[i], _ = cmd.CombinedOutput() })
	}
	wg.Wait()
	for i, cmd := range cmds {
		if cmd.ProcessState.ExitCode() != 0 || strings.Count(string(outs[i]), "recorded ") != 2 {
			t.Errorf("store import %d: exit %d\n%s", i, cmd.ProcessState.ExitCode(), outs[i])
		}
	}
	out, err := calibra([]string{"CALIBRA_STORE=" + withPassword}, "history", "--json").CombinedOutput()
	var rows []store.Row
	if jerr := json.Unmarshal(out, &rows); err != nil || jerr != nil {
		t.Fatalf("history --json: %v, %v\n%s", err, jerr, out)
	}
	var got []string
	for _, r := range rows {
		got = append(got, strings.Split(r.ID, "@")[0]+":"+fmt.Sprint(len(r.Headline)))
	}
	if want := "device-b:1,device-a:1,oltp-xss:1,oltp-base:1"; strings.Join(got, ",") != want {
		t.Errorf("history lists %s, want %s (each with its headline figure)", strings.Join(got, ","), want)
	}
	for _, o := range append(outs, out) {
		if strings.Contains(string(o), store.StorePassword) {
			t.Errorf("a command shows the password:\n%s", o)
		}
	}
}

// baselineAndServe records the same run directories, one of them judged
// regressed against its baseline, in PostgreSQL and SQLite, and asks both
// --baseline's query and calibra serve's: the answers are the same.
func baselineAndServe(t *testing.T, url string) {
	ctx := context.Background()
	pg, err := store.OpenSpec(ctx, store.Spec{URL: url}, store.Create)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	sqlite := store.OpenTemp(t)
	dir := t.TempDir()
	var dirs []string
	for _, name := range []string{"device-a", "device-b", "oltp-base", "repeats-a", "repeats-b"} {
		dirs = append(dirs, store.CopyRun(t, dir, name))
	}
	dirs = append(dirs, regressedRun(t, dir))
	var ids []string
	for _, s := range []*store.Store{pg, sqlite} {
		if ids, err = s.Import(ctx, dirs); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, query func(s *store.Store) (any, error)) any {
		t.Helper()
		p, perr := query(pg)
		l, lerr := query(sqlite)
		if perr != nil || lerr != nil {
			t.Fatalf("%s: PostgreSQL %v, SQLite %v", what, perr, lerr)
		}
		if !reflect.DeepEqual(p, l) {
			t.Errorf("%s: PostgreSQL answers\n%+v\nSQLite\n%+v", what, p, l)
		}
		return p
	}

	r, err := results.Load(dirs[4]) // repeats-b
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []store.BaselineQuery{
		{Target: store.TargetOf(r), Before: time.Now(), Limit: 3},
		{Target: store.TargetOf(r), Label: "repeats-a", Exclude: ids[4], Limit: 3},
	} {
		got := same(fmt.Sprintf("the baseline %+v", q), func(s *store.Store) (any, error) {
			return s.Baseline(ctx, q)
		}).(store.Picked)
		if len(got.Runs) == 0 {
			t.Errorf("the baseline %+v: no runs", q)
		}
	}

	type stored struct {
		Run   store.StoredRun
		Found bool
	}
	for _, id := range []string{ids[0], "nosuchrun"} {
		got := same("Stored "+id, func(s *store.Store) (any, error) {
			r, found, err := s.Stored(ctx, id)
			return stored{r, found}, err
		}).(stored)
		if got.Found != (id == ids[0]) || got.Found && !bytes.Contains(got.Run.Results, []byte(`"schema"`)) {
			t.Errorf("Stored %s: found %v, %d bytes of results.json", id, got.Found, len(got.Run.Results))
		}
	}
	names := same("FigureNames", func(s *store.Store) (any, error) { return s.FigureNames(ctx) }).([]store.FigureName)
	if i := slices.IndexFunc(names, func(f store.FigureName) bool { return f.Name() == "oltp.nopm" }); i < 0 || names[i].Runs != 3 {
		t.Errorf("FigureNames: %+v, want oltp.nopm measured by 3 runs", names)
	}
	trend := same("FigureTrend", func(s *store.Store) (any, error) {
		return s.FigureTrend(ctx, store.TrendQuery{Kind: "oltp", Metric: "nopm", Label: "repeats-*"})
	}).([]store.TrendPoint)
	if len(trend) != 2 || trend[0].N < 3 {
		t.Errorf("FigureTrend: %+v, want repeats-a and repeats-b, each with its repeats", trend)
	}
	regressed := same("Regressions", func(s *store.Store) (any, error) { return s.Regressions(ctx, false, 0) }).([]store.RegressionVerdict)
	if len(regressed) != 1 || regressed[0].ID != ids[5] || len(regressed[0].Figures) != 2 ||
		!regressed[0].Figures[0].Regressed || regressed[0].Figures[1].Regressed {
		t.Errorf("Regressions: %+v, want the regressed run with its regressed figure first, then the other", regressed)
	}
	if all := same("every verdict", func(s *store.Store) (any, error) { return s.Regressions(ctx, true, 0) }).([]store.RegressionVerdict); len(all) != 2 {
		t.Errorf("every verdict: %+v, want device-b's and the regressed run's", all)
	}

	// Schema 4's tables: a person's acceptance, each verdict's baseline
	// runs and the stable headline read the same from both.
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, s := range []*store.Store{pg, sqlite} {
		if err := s.Accept(ctx, ids[0], "alice", at); fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), "did not regress against its baseline") {
			t.Errorf("%s: accepting a run that did not regress: %v", s.Where, err)
		}
		if err := s.Accept(ctx, ids[5], "alice", at); err != nil {
			t.Fatalf("%s: accept: %v", s.Where, err)
		}
	}
	rows := same("History after accept", func(s *store.Store) (any, error) { return s.History(ctx, store.Query{}) }).([]store.Row)
	i := slices.IndexFunc(rows, func(r store.Row) bool { return r.ID == ids[5] })
	if i < 0 || rows[i].Baseline == nil || rows[i].Baseline.AcceptedBy != "alice" || !rows[i].Baseline.AcceptedAt.Equal(at) || len(rows[i].Headline) != 1 {
		t.Errorf("the accepted run in history: %+v, want accepted by alice at %s, with its one headline figure", rows[i], at)
	}
	dev, err := results.Load(dirs[5])
	if err != nil {
		t.Fatal(err)
	}
	picked := same("the baseline after accept", func(s *store.Store) (any, error) {
		return s.Baseline(ctx, store.BaselineQuery{Target: store.TargetOf(dev), Before: time.Now(), Limit: 6})
	}).(store.Picked)
	var taken []string
	for _, b := range picked.Runs {
		taken = append(taken, b.ID)
	}
	if !slices.Contains(taken, ids[5]) || len(picked.LeftOut) != 0 {
		t.Errorf("the baseline after accept: %v, left out %v; want the accepted run %s in it", taken, picked.LeftOut, ids[5])
	}
}

// locksHeld: another session holding calibra's migration lock, or the row
// of the run being recorded, past the lock timeout: a sentence naming the
// store (exit 1), never a wait without end; reading goes on meanwhile.
func locksHeld(t *testing.T, url string) {
	ctx := context.Background()
	s, err := store.OpenSpec(ctx, store.Spec{URL: url}, store.Create)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := store.CopyRun(t, t.TempDir(), "oltp-base")
	id, err := s.Record(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	want := "the PostgreSQL store " + url + " is locked: another session has held calibra's migration lock, or this run's record, for more than 5s"
	for _, c := range []struct {
		name, hold string
		args       []any
		then       func() error
	}{
		{"the migration lock", `SELECT pg_advisory_xact_lock(4242370037)`, nil, func() error {
			s, err := store.OpenSpec(ctx, store.Spec{URL: url}, store.Create)
			if err == nil {
				s.Close()
			}
			return err
		}},
		{"the run's record", `SELECT id FROM runs WHERE id = $1 FOR UPDATE`, []any{id}, func() error {
			_, err := s.Record(ctx, run)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx, err := other.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, c.hold, c.args...); err != nil {
				t.Fatal(err)
			}
			if err := c.then(); err == nil || fault.Code(err) != fault.ExitRuntime || !strings.Contains(err.Error(), want) {
				t.Errorf("with %s held: %v; want exit 1 and %q", c.name, err, want)
			}
			if rows, err := s.History(ctx, store.Query{}); err != nil || len(rows) != 1 {
				t.Errorf("history with %s held: %d runs, %v", c.name, len(rows), err)
			}
		})
	}
}

// regressedRun writes a run directory in dir: device-b an hour later,
// judged regressed against its baseline in one figure of two.
func regressedRun(t *testing.T, dir string) string {
	t.Helper()
	src := store.CopyRun(t, t.TempDir(), "device-b")
	data, err := os.ReadFile(filepath.Join(src, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	r["started_at"] = "2026-11-21T21:54:21.863458565Z"
	r["meta"].(map[string]any)["label"] = "regressed"
	b := r["baseline"].(map[string]any)
	b["verdict"], b["regressed"], b["reason"] = "regressed", true, "4k random read IOPS fell 12.5%"
	fig := b["figures"].([]any)[0].(map[string]any)
	other := maps.Clone(fig)
	fig["p"], fig["p_holm"], fig["delta_pct"], fig["regressed"], fig["verdict"] = 0.024, 0.024, -12.5, true, "regressed"
	other["metric"], other["p"], other["p_holm"], other["delta_pct"], other["verdict"] = "4k-randread.mbps_at_max_latency", 0.4, 0.4, 1.5, "~"
	b["figures"] = []any{fig, other}
	out := filepath.Join(dir, "device-regressed")
	if data, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkPostgresRecord is what a command pays at its end with a
// PostgreSQL store over a Unix socket: connect, record the quick study's
// run directory, close.
func BenchmarkPostgresRecord(b *testing.B) {
	url := store.PGStore(b, "results")
	b.Setenv("PGPASSWORD", store.StorePassword)
	ctx := context.Background()
	rd := store.CopyRun(b, b.TempDir(), "quick")
	for b.Loop() {
		s, err := store.OpenSpec(ctx, store.Spec{URL: url("results")}, store.Create)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Record(ctx, rd); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
