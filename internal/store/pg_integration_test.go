package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// storePassword is the store role's; no message may hold it.
const storePassword = "st0re-pw-5e1f"

// pgStore starts a socket-only PostgreSQL server that calibra does not
// manage (the test starts it by hand), with a role that logs in by
// password and the databases dbs it owns; it returns a URL maker
// without the password. One server serves the test and its subtests.
func pgStore(t *testing.T, dbs ...string) func(db string) string {
	t.Helper()
	_, missing := postgres.FindBinaries("")
	testenv.Need(t, "postgres", missing, "apt-get install postgresql")
	ctx := context.Background()
	target, err := postgres.Prepare(ctx, postgres.TargetConfig{Path: testenv.StorageDir(t), DBCache: "32MB"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, target)
	admin, err := pgx.ConnectConfig(ctx, target.ConnConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	stmts := []string{`CREATE ROLE bench LOGIN PASSWORD '` + storePassword + `'`}
	for _, db := range dbs {
		stmts = append(stmts, `CREATE DATABASE `+db+` OWNER bench`)
	}
	for _, s := range stmts {
		if _, err := admin.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The managed instance lets in only its own accounts, by peer: this
	// role logs in with its password, as on a team's server.
	hba := filepath.Join(target.Managed.DataDir, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, append([]byte("local all bench scram-sha-256\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	sock, port := target.Managed.SocketDir, target.Managed.Port
	return func(db string) string {
		return fmt.Sprintf("postgres://bench@/%s?host=%s&port=%d&sslmode=disable", db, sock, port)
	}
}

// TestPostgresStore: a team's PostgreSQL store, made on first use by two
// commands at once that record overlapping runs concurrently; both land,
// once each; history and a trend list them as SQLite's would; the
// password never shows; a store at schema version 1 migrates.
func TestPostgresStore(t *testing.T) {
	url := pgStore(t, "results", "results_v1")
	ctx := context.Background()
	withPassword := strings.Replace(url("results"), "bench@", "bench:"+storePassword+"@", 1)

	t.Run("wrong password", func(t *testing.T) {
		spec, err := ParseSpec("CALIBRA_STORE", strings.Replace(withPassword, storePassword, "wrong-"+storePassword, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = OpenSpec(ctx, spec, true)
		if err == nil || strings.Contains(err.Error(), storePassword) || !strings.Contains(err.Error(), "bench:xxxxx@") {
			t.Errorf("a wrong password: %v; want a refusal naming the store without its password", err)
		}
	})

	dir := t.TempDir()
	sets := [][]string{{"quick", "oltp-base", "repeats-a"}, {"repeats-b", "device-a", "quick"}}
	// One command has the password in CALIBRA_STORE, the other in PGPASSWORD.
	t.Setenv("PGPASSWORD", storePassword)
	specs := []string{withPassword, url("results")}
	var wg sync.WaitGroup
	errs := make(chan error, len(sets))
	for i, set := range sets {
		sub := filepath.Join(dir, fmt.Sprint(i))
		var dirs []string
		for _, name := range set {
			dirs = append(dirs, copyRun(t, sub, name))
		}
		wg.Go(func() {
			spec, err := ParseSpec("CALIBRA_STORE", specs[i])
			if err != nil {
				errs <- err
				return
			}
			s, err := OpenSpec(ctx, spec, true)
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

	s, err := OpenSpec(ctx, Spec{URL: url("results")}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.History(ctx, Query{})
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
	if err := s.db.QueryRow(`SELECT count(*), count(DISTINCT run_id) FROM figures`).Scan(&figures, &runs); err != nil {
		t.Fatal(err)
	}
	sqlite := openTemp(t)
	if _, err := sqlite.Import(ctx, []string{copyRun(t, t.TempDir(), "quick"), copyRun(t, t.TempDir(), "oltp-base"), copyRun(t, t.TempDir(), "repeats-a"),
		copyRun(t, t.TempDir(), "repeats-b"), copyRun(t, t.TempDir(), "device-a")}); err != nil {
		t.Fatal(err)
	}
	if want := count(t, sqlite, `SELECT count(*) FROM figures`); figures != want || runs != 5 {
		t.Errorf("%d figures of %d runs, want %d of 5 (each run once)", figures, runs, want)
	}
	q := Query{Metric: "oltp.nopm", Label: "repeats-*"}
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

	t.Run("from version 1", func(t *testing.T) {
		old, err := openPostgres(ctx, url("results_v1"), 1)
		if err != nil {
			t.Fatal(err)
		}
		old.Close()
		s, err := OpenSpec(ctx, Spec{URL: url("results_v1")}, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if v := count(t, s, `SELECT max(version) FROM schema_version`); v != SchemaVersion {
			t.Errorf("at version %d, want %d", v, SchemaVersion)
		}
		if _, err := s.Record(ctx, copyRun(t, t.TempDir(), "quick")); err != nil {
			t.Error(err)
		}
	})
}
