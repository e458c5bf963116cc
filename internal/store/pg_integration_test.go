package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
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
// nowhere; a store at schema version 1 migrates.
func TestPostgresStore(t *testing.T) {
	url := store.PGStore(t, "results", "commands", "results_v1")
	ctx := context.Background()
	withPassword := func(db string) string {
		return strings.Replace(url(db), "bench@", "bench:"+store.StorePassword+"@", 1)
	}

	t.Run("wrong password", func(t *testing.T) {
		spec, err := store.ParseSpec("CALIBRA_STORE", strings.Replace(withPassword("results"), store.StorePassword, "wrong-"+store.StorePassword, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.OpenSpec(ctx, spec, true)
		if err == nil || strings.Contains(err.Error(), store.StorePassword) || !strings.Contains(err.Error(), "bench:xxxxx@") {
			t.Errorf("a wrong password: %v; want a refusal naming the store without its password", err)
		}
	})

	// Where the URL has none (the rest of this test), the password comes
	// from the environment.
	t.Setenv("PGPASSWORD", store.StorePassword)
	t.Run("concurrent writers", func(t *testing.T) { concurrentWriters(t, withPassword("results"), url("results")) })
	t.Run("two commands at once", func(t *testing.T) { twoCommands(t, withPassword("commands"), url("commands")) })

	t.Run("from version 1", func(t *testing.T) {
		old, err := store.OpenPostgresAt(ctx, url("results_v1"), 1)
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		s, err := store.OpenSpec(ctx, store.Spec{URL: url("results_v1")}, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v := store.Count(t, s, `SELECT max(version) FROM schema_version`); v != store.SchemaVersion {
			t.Errorf("at version %d, want %d", v, store.SchemaVersion)
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
			s, err := store.OpenSpec(ctx, store.Spec{URL: specs[i]}, true)
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

	s, err := store.OpenSpec(ctx, store.Spec{URL: noPassword}, false)
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

// BenchmarkPostgresRecord is what a command pays at its end with a
// PostgreSQL store over a Unix socket: connect, record the quick study's
// run directory, close.
func BenchmarkPostgresRecord(b *testing.B) {
	url := store.PGStore(b, "results")
	b.Setenv("PGPASSWORD", store.StorePassword)
	ctx := context.Background()
	rd := store.CopyRun(b, b.TempDir(), "quick")
	for b.Loop() {
		s, err := store.OpenSpec(ctx, store.Spec{URL: url("results")}, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Record(ctx, rd); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
