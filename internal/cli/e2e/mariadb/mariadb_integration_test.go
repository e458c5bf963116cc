//go:build integration

package mariadb

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/results"
)

// The TPC-C-like layer on MariaDB, from the command line: a build, a timed
// run in each mode judged as on PostgreSQL, the engine recorded, and Ctrl-C
// during a run leaving no mariadbd behind.
func TestOLTPOnManagedMariaDB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	clitest.RequireMariaDB(t)
	path := clitest.StorageDir(t)
	outs := t.TempDir()
	common := []string{"--engine", "mariadb", "--db-cache", "128MB", "--path", path, "--progress", "none"} // [:6] ends at --path

	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", filepath.Join(outs, "build")}, common...)...)
	clitest.NoServerLeft(t, path)
	_, build := clitest.LastStep[*results.OLTPBuild](t, filepath.Join(outs, "build"))
	if build.Rows["stock"] != 100000 || build.Consistency == nil || !build.Consistency.OK || build.Template == "" {
		t.Fatalf("build: rows %v, consistency %+v, template %q", build.Rows, build.Consistency, build.Template)
	}
	// The procedures run back to back (a closed loop, the default); a
	// statement at a time paced (oltptest.Paced), which proves the same
	// with half the CPU.
	for _, mode := range []string{"procedures", "client-simple"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(outs, mode)
			window := []string{"--duration", oltptest.Window(mode).String()}
			if mode == "client-simple" {
				window = oltptest.Paced(mode)
			}
			clitest.MustRun(t, 0, append(append([]string{"oltp", "run", "--reset", "--users", "3", "--rampup", "1s",
				"--mode", mode, "--out", out}, window...), common...)...)
			clitest.NoServerLeft(t, path)
			clitest.CheckRun(t, out, mode)
			r, err := results.Load(out)
			if err != nil || r.Meta.Engine == nil || r.Meta.Engine.Name != "mariadb" || !strings.HasPrefix(r.Meta.Engine.Version, "10.") ||
				r.Meta.Engine.Settings["innodb_flush_method"] != "O_DIRECT" {
				t.Fatalf("meta.engine %+v (%v): want MariaDB 10.x with its settings", r.Meta.Engine, err)
			}
		})
	}

	code, stderr := clitest.InterruptChild(t, "oltp measure", time.Second, append([]string{"oltp", "run", "--users", "2",
		"--rampup", "1s", "--duration", "5m", oltptest.PacedFlag, "--progress", "plain",
		"--out", filepath.Join(outs, "cut")}, common[:6]...)...)
	if code != 130 {
		t.Fatalf("interrupted run: exit %d\n%s", code, stderr)
	}
	clitest.NoServerLeft(t, path)
}
