// Package twin proves the seam: a third engine, defined only here, is
// PostgreSQL under another name, registered with its own descriptor and
// dialects. It passes the conformance suite and a whole oltp build and
// run through the command line, and no file outside this one changes.
package twin

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/iocal"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// name is the third engine's.
const name = "pgtwin"

// target is PostgreSQL's, under another name: its capabilities (restart,
// templates, kill, counters) come with it.
type target struct{ *postgres.Target }

func (t target) Name() string { return name }

func (t target) Describe() results.Engine {
	d := t.Target.Describe()
	d.Name = name
	return d
}

func init() {
	d := postgres.Descriptor(name, "PgTwin", false, func(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
		t, err := postgres.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return target{t}, nil
	})
	// Its own scheme and no options of its own: PostgreSQL keeps
	// postgres:// and --pg-bin.
	d.DSNSchemes, d.Options = []string{name}, nil
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
	testenv.Need(t, "postgres", err, "apt-get install postgresql")
}

func TestEngineTwinPassesTheConformanceSuite(t *testing.T) {
	requirePostgres(t)
	connect := func(ctx context.Context, e engine.Engine) (*pgx.Conn, error) {
		return pgx.ConnectConfig(ctx, e.(target).ConnConfig())
	}
	enginetest.Run(t, enginetest.Suite{
		Open: func(t *testing.T, path string) engine.Engine {
			e, err := engine.Open(context.Background(), name, engine.Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		Exec: func(ctx context.Context, e engine.Engine, sql string) error {
			conn, err := connect(ctx, e)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, sql)
			return err
		},
		Count: func(ctx context.Context, e engine.Engine, table string) (int64, error) {
			conn, err := connect(ctx, e)
			if err != nil {
				return 0, err
			}
			defer conn.Close(ctx)
			var n int64
			return n, conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n)
		},
		Setting: "shared_buffers",
		Value:   postgres.DefaultDBCache,
		OpenDSN: func(password string) (engine.Engine, error) {
			return engine.Open(context.Background(), name, engine.Config{DSN: "postgres://bench:" + password + "@127.0.0.1:1/bench"})
		},
	})
}

// The command line, the runner and the results take the third engine as
// they take the others: a build and a timed run measure it, and
// results.json names it.
func TestEngineTwinRunsOLTPThroughTheCommandLine(t *testing.T) {
	requirePostgres(t)
	dir := testenv.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	calibra := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := cli.Main(append(args, "--path", dir), &stdout, &stderr); code != 0 {
			t.Fatalf("calibra %v: exit %d\n%s", args, code, stderr.String())
		}
		return stderr.String()
	}
	on := []string{"--engine", name, "--progress", "none", "--db-cache", "64MB", "--warehouses", "1"}
	calibra(append([]string{"oltp", "build"}, on...)...)
	calibra(append([]string{"oltp", "run", "--users", "2", "--rampup", "0s", "--duration", "5s", "--out", out}, on...)...)
	if said := calibra("clean"); !strings.Contains(said, "removed the managed PgTwin instance") {
		t.Errorf("clean did not say it removed the third engine's instance:\n%s", said)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Engine == nil || r.Meta.Engine.Name != name {
		t.Fatalf("results.json's engine is %+v, not %s", r.Meta.Engine, name)
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
