//go:build integration

// Package twin proves the seam: a third engine, defined only here, is
// PostgreSQL under another name, registered with its own descriptor and
// dialects. It passes the conformance suite and a whole oltp build and
// run through the command line, and no file outside this one changes.
// Its name is plainly a fixture's, so a real engine (a PostgreSQL twin
// of its own) never meets it at registration.
package twin

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// name is the third engine's.
const name = "seamfixture"

// target is PostgreSQL's, under another name: its capabilities (restart,
// templates, kill, counters) come with it.
type target struct{ *postgres.Target }

func (t target) Name() string { return name }

// kind is PostgreSQL under the third engine's name, in directories of its
// own and with no options: PostgreSQL keeps --pg-bin.
var kind = postgres.Kind{Name: name, Title: "SeamFixture", Dirs: postgres.Dirs{Data: "calibra-seamfixture", WAL: "calibra-seamfixture-wal", Replica: "calibra-seamfixture-replica-"}}

func init() {
	d := postgres.Descriptor(kind, func(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
		t, err := postgres.Open(ctx, kind, cfg)
		if err != nil {
			return nil, err
		}
		return target{t}, nil
	})
	// Its own scheme: PostgreSQL keeps postgres://.
	d.DSNSchemes = []string{name}
	engine.Register(d)
	// Each workload's dialect is PostgreSQL's, on the wrapped target.
	engine.RegisterFor(oltp.Dialects, name, func(t target) (oltp.Dialect, error) { return oltp.Dialects.For(t.Target) },
		oltp.Supports(oltp.Modes...)...)
	engine.RegisterFor(dss.Dialects, name, func(t target) (dss.Dialect, error) { return dss.Dialects.For(t.Target) })
	engine.RegisterFor(iocal.Dialects, name, func(t target) (iocal.Dialect, error) { return iocal.Dialects.For(t.Target) })
	engine.RegisterFor(observe.Dialects, name, func(t target) (observe.DBSource, error) { return observe.Dialects.For(t.Target) })
}

func requirePostgres(t *testing.T) {
	_, err := postgres.FindBinaries("")
	testenv.Need(t, "postgresql", err, "apt-get install postgresql")
}

func TestEngineTwinPassesTheConformanceSuite(t *testing.T) {
	requirePostgres(t)
	enginetest.Run(t, enginetest.Suite{Engine: name, DB: func(e engine.Engine) *sql.DB { return stdlib.OpenDB(*e.(target).ConnConfig()) },
		Setting: "shared_buffers", Value: postgres.DefaultDBCache, DSN: "postgres://bench:%s@127.0.0.1:1/bench"})
}

// The command line, the runner and the results take the third engine as
// they take the others: a build and a timed run measure it, and
// results.json names it. PostgreSQL, built on the same path, gets an
// instance of its own: neither command opens the other engine's, and
// clean removes both, each by its name.
func TestEngineTwinRunsOLTPThroughTheCommandLine(t *testing.T) {
	requirePostgres(t)
	dir, runs := testenv.StorageDir(t), t.TempDir()
	calibra := func(out string, args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if out != "" {
			args = append(args, "--out", filepath.Join(runs, out))
		}
		if code := cli.Main(append(args, "--path", dir), &stdout, &stderr); code != 0 {
			t.Fatalf("calibra %v: exit %d\n%s", args, code, stderr.String())
		}
		return stderr.String()
	}
	on := func(engine string) []string {
		return []string{"--engine", engine, "--progress", "none", "--db-cache", "64MB", "--warehouses", "1"}
	}
	calibra("twin-build", append([]string{"oltp", "build"}, on(name)...)...)
	calibra("pg-build", append([]string{"oltp", "build"}, on(postgres.Name)...)...)
	calibra("twin-run", append([]string{"oltp", "run", "--users", "2", "--rampup", "0s", "--duration", "3s", oltptest.PacedFlag}, on(name)...)...)
	for out, want := range map[string]string{"pg-build": postgres.DataDirName, "twin-build": kind.Dirs.Data, "twin-run": kind.Dirs.Data} {
		if got := load(t, filepath.Join(runs, out)).Meta.Engine.Target; got != filepath.Join(dir, want) {
			t.Errorf("%s ran on the instance in %s, want %s", out, got, filepath.Join(dir, want))
		}
	}
	said := calibra("", "clean")
	for _, title := range []string{kind.Title, "PostgreSQL"} {
		if !strings.Contains(said, "removed the managed "+title+" instance") {
			t.Errorf("clean did not say it removed the %s instance:\n%s", title, said)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "calibra-*")); len(left) > 0 {
		t.Errorf("clean left %v", left)
	}
	r := load(t, filepath.Join(runs, "twin-run"))
	if r.Meta.Engine.Name != name {
		t.Fatalf("results.json's engine is %s, not %s", r.Meta.Engine.Name, name)
	}
	var o *results.OLTP
	for _, st := range r.Steps {
		if b, ok := st.Body.(*results.OLTP); ok {
			o = b
		}
	}
	if o == nil || o.NOPM == nil || !(*o.NOPM > 0) {
		t.Fatalf("the timed run measured no New-Orders: %+v", o)
	}
}

func load(t *testing.T, dir string) *results.Run {
	t.Helper()
	r, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Engine == nil {
		t.Fatalf("%s names no engine", dir)
	}
	return r
}
