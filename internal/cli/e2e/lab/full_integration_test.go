//go:build integration

package lab

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
)

// A lab that calibra's estimate says is large enough, filled all the
// same (a redo log an engine setting makes twice the lab): the run fails
// (exit 1) in one sentence that names the full file system, what the
// command needed and the fix, in front of the server's own words.
func TestAFullLabIsNamedWithItsFix(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	clitest.RequireMariaDB(t)
	path, out := clitest.StorageDir(t), filepath.Join(t.TempDir(), "run")
	defer clitest.Run(t, "clean", "--path", path)
	code, _, stderr := clitest.Run(t, "oltp", "build", "--engine", "mariadb", "--db-cache", "64MB", "--engine-setting", "innodb_log_file_size=2G",
		"--lab", "plain:size=1G", "--warehouses", "1", "--path", path, "--progress", "none", "--out", out)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	mount := filepath.Join(path, "calibra-lab", "fs")
	for _, want := range []string{"calibra: the file system of " + mount + " ran out of space (", "and oltp build needs about 672.0 MiB",
		"ib_logfile101 failed with error 28", "; give the lab a larger size= in --lab, or a smaller --db-cache"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line does not say %q:\n%s", want, stderr)
		}
	}
	if r, err := results.Load(out); code != 1 || err != nil || r.Status != results.StatusFailed {
		t.Errorf("exit %d, results %v: want 1 and a failed run", code, err)
	}
	clitest.NoLabLeft(t, path)
}
