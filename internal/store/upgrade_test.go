package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A store an older calibra filled (schema 3) is migrated by whichever
// command opens it first, writing or reading: the headlines of the runs
// with a copy of their results.json are made again by today's rule, the
// others are counted, and one line says all of it; once only.
func TestMigrationRebuildsHeadlines(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(fixtures, "quick", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	gz, err := compress(bytes.NewReader(data), -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, reopen := range []func(context.Context, string) (*Store, error){Open, OpenExisting} {
		path := filepath.Join(t.TempDir(), "results.db")
		old, err := open(ctx, path, Create, 3)
		if err != nil {
			t.Fatal(err)
		}
		at := formatTime(time.Unix(0, 0))
		// What an older rule made: another figure of the device step.
		for _, r := range []struct {
			id       string
			headline string
			gz       []byte
		}{{"kept@1", `[{"name":"device.4k-randread.qd1.iops","value":1,"n":1,"min":1,"max":1}]`, gz}, {"lost@1", `[]`, nil}} {
			if _, err := old.db.Exec(`INSERT INTO runs (id, dir, status, started_at, recorded_at, headline, results_gz) VALUES (?, '/old', 'complete', ?, ?, ?, ?)`,
				r.id, at, at, r.headline, r.gz); err != nil {
				t.Fatal(err)
			}
		}
		old.Close()

		s, err := reopen(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("calibra: migrated the results store %s from schema version 3 to %d (new tables accepted, baseline_runs, live, live_seconds; new column runs.headline_rule", path, SchemaVersion)
		for _, w := range []string{want, "; rebuilt the headlines of 1 run from the store's copy of their results.json; 1 run recorded before schema 3 kept no results.json and show an older headline or none: calibra store import DIR of their run directories restores them"} {
			if !strings.Contains(s.Migrated, w) {
				t.Errorf("the migration said %q, want %q in it", s.Migrated, w)
			}
		}
		rows, err := s.History(ctx, Query{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			var names []string
			for _, f := range r.Headline {
				names = append(names, f.Name)
			}
			got[r.ID] = strings.Join(names, ",")
		}
		if want := "device.4k-randread.iops_at_max_latency,iocal.max_iops,oltp.nopm,ramp.max_tps,dss.qphh"; got["kept@1"] != want || got["lost@1"] != "" {
			t.Errorf("the headlines after the migration: %q, want kept@1's %s and lost@1's none", got, want)
		}
		s.Close()
		again, err := reopen(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if again.Migrated != "" {
			t.Errorf("opened again, it said %q, want nothing", again.Migrated)
		}
		again.Close()
	}
	if s := openTemp(t); s.Migrated != "" {
		t.Errorf("a new store said %q, want nothing", s.Migrated)
	}
}

// What a migration says it added is what the dialect ran: PostgreSQL's
// own line of version 2 is a comment to SQLite.
func TestSchemaChanges(t *testing.T) {
	for _, c := range []struct {
		d    dialect
		want string
	}{
		{dialect{}, "new columns runs.headline, runs.recorded_on; new indexes figures_metric, runs_started_id"},
		{dialect{postgres: true}, "new columns runs.headline, runs.recorded_on, verdicts.rowid; new indexes figures_metric, runs_started_id"},
	} {
		if got := schemaChanges(c.d, 1, 2); got != c.want {
			t.Errorf("postgres %v: %q, want %q", c.d.postgres, got, c.want)
		}
	}
}
