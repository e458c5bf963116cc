//go:build integration

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// High (issue 51): root ran the programs another account owns or can
// change: --fio, --tpchgen, --pg-bin and a study's target.pg_bin. Each
// option naming such a program, in each way another account (nobody) can
// hold one, is refused in one sentence with exit 2, before the program
// runs (each writes a mark if it does) and before any run directory.
func TestAnotherAccountsProgramsNeverRun(t *testing.T) {
	pgPrograms := []string{"initdb", "postgres", "pg_basebackup"}
	options := []struct {
		name  string
		traps []testenv.Trap
		args  func(t *testing.T, prog string) []string
		says  string // what the refusal names, before the program's path
	}{
		{"--fio", testenv.Traps(t, "fio", "fio-3.33"), func(t *testing.T, p string) []string {
			return []string{"device", "--fio", p, "--specs", "4k-randread", "--qd", "1", "--size", "16M", "--runtime", "1s"}
		}, "--fio "},
		{"--tpchgen", testenv.Traps(t, "tpchgen-cli", "tpchgen-cli 2.0.1"), func(t *testing.T, p string) []string {
			return []string{"dss", "build", "--sf", "0.01", "--tpchgen", p}
		}, "--tpchgen "},
		{"--pg-bin", testenv.TrapDirs(t, "postgres (PostgreSQL) 15.1", pgPrograms...), func(t *testing.T, p string) []string {
			return []string{"oltp", "build", "--warehouses", "1", "--pg-bin", p}
		}, "--pg-bin "},
		{"target.pg_bin", testenv.TrapDirs(t, "postgres (PostgreSQL) 15.1", pgPrograms...), func(t *testing.T, p string) []string {
			return []string{"run", "--study", programStudy(t, "target: {pg_bin: "+p+"}\n")}
		}, "--pg-bin "},
		{"a variant's target.pg_bin", testenv.TrapDirs(t, "postgres (PostgreSQL) 15.1", pgPrograms...), func(t *testing.T, p string) []string {
			return []string{"run", "--study", programStudy(t, "variants:\n  - {name: theirs, target: {pg_bin: "+p+"}}\n")}
		}, "--pg-bin "},
	}
	for _, o := range options {
		for _, trap := range o.traps {
			t.Run(o.name+", "+trap.Case, func(t *testing.T) {
				path, out := clitest.StorageDir(t), filepath.Join(t.TempDir(), "run")
				args := append(o.args(t, trap.Path), "--path", path, "--out", out)
				code, _, stderr := clitest.Run(t, args...)
				refusedInOneSentence(t, code, stderr, o.says+trap.Path+": ")
				if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
					t.Errorf("%d more lines than the one sentence:\n%s", n, stderr)
				}
				if trap.Ran() {
					t.Error("the program ran")
				}
				if _, err := os.Lstat(out); !os.IsNotExist(err) {
					t.Errorf("a run directory was made for a refused command: %v", err)
				}
			})
		}
	}
}

// A program found on PATH passes the same rule: another account's fio
// first on root's PATH is refused, and never runs.
func TestAnotherAccountsProgramOnPathNeverRuns(t *testing.T) {
	for _, trap := range testenv.Traps(t, "fio", "fio-3.33") {
		t.Run(trap.Case, func(t *testing.T) {
			t.Setenv("PATH", filepath.Dir(trap.Path)+string(os.PathListSeparator)+os.Getenv("PATH"))
			code, _, stderr := clitest.Run(t, "device", "--specs", "4k-randread", "--qd", "1", "--size", "16M", "--runtime", "1s",
				"--path", clitest.StorageDir(t), "--out", filepath.Join(t.TempDir(), "run"))
			refusedInOneSentence(t, code, stderr, "fio on PATH: ")
			if trap.Ran() {
				t.Error("the program ran")
			}
		})
	}
}

// programStudy writes a study of root's, in root's directory, with one OLTP
// build step and the given YAML lines.
func programStudy(t *testing.T, lines string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "study.yaml")
	text := "version: 1\nname: programs\n" + lines + "steps:\n  - kind: oltp_build\n    warehouses: 1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil { // safefs: in t.TempDir, the test's own
		t.Fatal(err)
	}
	return path
}
