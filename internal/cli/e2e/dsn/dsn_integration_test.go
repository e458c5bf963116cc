//go:build integration

package dsn

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
)

var shipped = map[string]func(*testing.T) server{"postgresql": postgresAsShipped, "mariadb": mariadbAsShipped}

// Every command that takes --dsn, as a least-privilege account of a
// server with the settings it ships with: oltp build, run (with the
// database's own transaction count, which MariaDB without
// performance_schema reads from its handler counters; the engine named by
// the DSN alone and recorded as not managed) and check, iocal, a run in
// two partitions merged, dss build and power, and profile. These
// servers' counters are young, none past 2^31: MariaDB's fallback count is
// tested on literal values past it (mariadb's
// TestTheHandlerCountReadsLargeCounters); PostgreSQL's counters are bigint
// columns read as int64; MariaDB's status counters reach the observer as
// doubles, exact to 2^53, untested past 2^31.
func TestEveryDSNPathOnServersAsShipped(t *testing.T) {
	for name, start := range shipped {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t)
			outs := t.TempDir()
			run := filepath.Join(outs, "run")
			for _, args := range [][]string{
				// Two warehouses: the partitions below split the users by
				// home warehouse.
				{"oltp", "build", "--warehouses", "2", "--out", filepath.Join(outs, "build")},
				append([]string{"oltp", "run", "--users", "2", "--rampup", "1s", "--out", run}, oltptest.Paced("procedures")...),
				{"oltp", "check", "--out", filepath.Join(outs, "check")},
				{"iocal", "--size", "64MiB", "--jobs", "1,2", "--tests", "random,wal", "--point", "2s", "--out", filepath.Join(outs, "iocal")},
			} {
				clitest.MustRun(t, 0, append(args, "--dsn-file", s.dsnFile, "--progress", "none")...)
			}
			if _, o := clitest.LastStep[*results.OLTP](t, run); o.NOPM == nil || *o.NOPM <= 0 || o.TPMDB == nil || *o.TPMDB <= 0 {
				t.Errorf("oltp run: nopm %v, tpm_db %v (missing %v): want both measured", o.NOPM, o.TPMDB, o.Missing)
			}
			if r, err := results.Load(run); err != nil || r.Meta.Engine == nil || r.Meta.Engine.Name != name || r.Meta.Engine.Managed {
				t.Errorf("meta.engine %+v (%v): want %s, named by the DSN alone, not managed", r.Meta.Engine, err, name)
			}
			// Two partitions of one run, merged to the database's own
			// count; the server, which calibra does not manage, is still
			// up to give it.
			part := func(i int) string { return filepath.Join(outs, fmt.Sprintf("p%d", i)) }
			before := s.newOrders(t)
			clitest.RunPartitions(t, 2, part, "--dsn-file", s.dsnFile, "--users", "4", "--rampup", "0s", "--duration", "3s",
				oltptest.PacedFlag)
			gained := s.newOrders(t) - before
			clitest.MustRun(t, 0, "merge", part(2), part(1), "--out", filepath.Join(outs, "merged"))
			// The merged tpm_db is not checked (CheckMergedTPMDB): a MariaDB
			// session's first calls, in a window without a ramp-up, count
			// more transactions than they are (one process alone: 485
			// against 481 run).
			clitest.CheckMerge(t, filepath.Join(outs, "merged"), []string{part(1), part(2)}, gained)
			clitest.MustRun(t, 0, "profile", "--duration", "2s", "--out", filepath.Join(outs, "profile.yaml"), "--dsn-file", s.dsnFile, "--progress", "none")
			t.Run("dss", func(t *testing.T) {
				clitest.RequireTpchgen(t)
				for _, args := range [][]string{{"dss", "build", "--sf", "0.01"}, {"dss", "power"}} {
					clitest.MustRun(t, 0, append(args, "--dsn-file", s.dsnFile, "--progress", "none", "--out", filepath.Join(outs, args[0]+args[1]))...)
				}
			})
		})
	}
}

// A --dsn account without a grant a command needs, or a server with too
// few connections for it, is refused before the run starts: exit 2, one
// sentence naming what is missing and the statement that gives it, and
// no run directory.
func TestAMissingGrantIsNamedBeforeTheRun(t *testing.T) {
	cases := []struct {
		engine string
		revoke string
		args   []string
		want   string
	}{
		{"postgresql", "REVOKE CREATE ON DATABASE bench FROM bench", []string{"oltp", "build", "--warehouses", "1"}, "'GRANT CREATE ON DATABASE bench TO bench'"},
		{"postgresql", "REVOKE CREATE ON DATABASE bench FROM bench", []string{"dss", "build", "--sf", "0.01"}, "'GRANT CREATE ON DATABASE bench TO bench'"},
		{"postgresql", "REVOKE pg_checkpoint FROM bench", []string{"iocal", "--size", "64MiB", "--jobs", "1,2"}, "'GRANT pg_checkpoint TO bench'"},
		{"postgresql", "REVOKE pg_monitor FROM bench", []string{"profile", "--duration", "2s"}, "'GRANT pg_monitor TO bench'"},
		// iocal's default sweep, to 256 jobs, on a server's default 100
		// (PostgreSQL) or 151 (MariaDB) connections.
		{"postgresql", "", []string{"iocal", "--size", "64MiB"}, "raise max_connections"},
		{"mariadb", "REVOKE CREATE ROUTINE, ALTER ROUTINE ON bench.* FROM bench@localhost", []string{"oltp", "build", "--warehouses", "1"}, "lacks CREATE ROUTINE, ALTER ROUTINE on the database bench"},
		{"mariadb", "REVOKE ALL ON bench_tpch.* FROM bench@localhost", []string{"dss", "build", "--sf", "0.01"}, "'GRANT ALL ON bench_tpch.* TO 'bench'@'localhost''"},
		{"mariadb", "REVOKE RELOAD ON *.* FROM bench@localhost", []string{"iocal", "--size", "64MiB", "--jobs", "1,2"}, "'GRANT RELOAD ON *.* TO 'bench'@'localhost''"},
		{"mariadb", "REVOKE PROCESS ON *.* FROM bench@localhost", []string{"profile", "--duration", "2s"}, "PROCESS"},
		{"mariadb", "", []string{"iocal", "--size", "64MiB"}, "raise max_connections"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %s %s", c.engine, c.args[0], cmp.Or(c.revoke, "max_connections")), func(t *testing.T) {
			t.Parallel()
			s := shipped[c.engine](t)
			if c.revoke != "" {
				s.admin(t, c.revoke)
			}
			out := filepath.Join(t.TempDir(), "run")
			code, _, stderr := clitest.Run(t, append(c.args, "--dsn-file", s.dsnFile, "--progress", "none", "--out", out)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != fault.ExitInput || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("exit %d, want %d with one sentence holding %s:\n%s", code, fault.ExitInput, c.want, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("the refused run made its run directory %s (%v)", out, err)
			}
		})
	}
}
