package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// requireMariaDB skips a test when no MariaDB server is installed, saying
// how to install one, unless CI requires it.
func requireMariaDB(t *testing.T) {
	t.Helper()
	if !mariadb.Installed() {
		if testenv.Required("mariadb") {
			t.Fatal("MariaDB is required here: no mariadbd or mariadb-install-db found")
		}
		t.Skip("no MariaDB server installed (apt-get install mariadb-server)")
	}
}

// The TPC-C-like layer on MariaDB, from the command line: a build, a timed
// run in each mode judged as on PostgreSQL, the engine recorded, and Ctrl-C
// during a run leaving no mariadbd behind.
func TestOLTPOnManagedMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	requireMariaDB(t)
	path := storageDir(t)
	outs := t.TempDir()
	common := []string{"--engine", "mariadb", "--path", path, "--progress", "none"}

	mustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", filepath.Join(outs, "build")}, common...)...)
	noServerLeft(t, path)
	_, build := lastStep[*results.OLTPBuild](t, filepath.Join(outs, "build"))
	if build.Rows["stock"] != 100000 || build.Consistency == nil || !build.Consistency.OK || build.Template == "" {
		t.Fatalf("build: rows %v, consistency %+v, template %q", build.Rows, build.Consistency, build.Template)
	}
	for _, mode := range []string{"procedures", "client"} {
		t.Run(mode, func(t *testing.T) {
			out := filepath.Join(outs, mode)
			mustRun(t, 0, append([]string{"oltp", "run", "--reset", "--users", "3", "--rampup", "1s", "--duration", "8s",
				"--mode", mode, "--out", out}, common...)...)
			noServerLeft(t, path)
			checkRun(t, out, mode)
			r, err := results.Load(out)
			if err != nil || r.Meta.Engine == nil || r.Meta.Engine.Name != "mariadb" || !strings.HasPrefix(r.Meta.Engine.Version, "10.") ||
				r.Meta.Engine.Settings["innodb_flush_method"] != "O_DIRECT" {
				t.Fatalf("meta.engine %+v (%v): want MariaDB 10.x with its settings", r.Meta.Engine, err)
			}
		})
	}

	code, stderr := interruptChild(t, "oltp measure", time.Second, append([]string{"oltp", "run", "--users", "2",
		"--rampup", "1s", "--duration", "5m", "--progress", "plain", "--out", filepath.Join(outs, "cut")}, common[:4]...)...)
	if code != 130 {
		t.Fatalf("interrupted run: exit %d\n%s", code, stderr)
	}
	noServerLeft(t, path)
}
