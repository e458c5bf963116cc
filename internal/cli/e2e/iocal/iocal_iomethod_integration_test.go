//go:build integration

package iocal

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// TestIOCalRecordsTheIOMethod: two iocal runs on PostgreSQL 18, one with
// io_method=sync and one at the server's default, each record the method
// in force (the default one too) and compare names the setting they
// differ in; io_uring, where the build lacks it, is exit 2 in a sentence.
func TestIOCalRecordsTheIOMethod(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a real PostgreSQL 18; run without -short")
	}
	pg18 := clitest.RequirePostgres18(t)
	path := clitest.StorageDir(t)
	dirs := map[string]string{}
	for _, method := range []string{"sync", ""} {
		out := filepath.Join(t.TempDir(), "run")
		args := []string{"iocal", "--pg-bin", pg18.Dir, "--path", path, "--out", out, "--progress", "none", "--size", "16MiB",
			"--tests", "random", "--jobs", "1", "--point", "1s", "--warmup", "0s", "--db-cache", "16MB"}
		if method != "" {
			args = append(args, "--engine-setting", "io_method="+method)
		}
		clitest.MustRun(t, 0, args...)
		_, io := clitest.LastStep[*results.IOCal](t, out)
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		want := method
		if want == "" {
			want = "worker" // 18's default
		}
		if io.IOMethod != want || r.Meta.Engine == nil || r.Meta.Engine.Settings["io_method"] != want {
			t.Errorf("io_method %q: iocal records %q, meta.engine %+v", want, io.IOMethod, r.Meta.Engine)
		}
		dirs[want] = out
	}
	code, stdout, stderr := clitest.Run(t, "compare", dirs["sync"], dirs["worker"])
	if code != 0 || !strings.Contains(stdout, "runs differ in setting io_method (sync vs worker)") {
		t.Errorf("compare: exit %d, %s\n%s", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "uring")
	code, _, stderr = clitest.Run(t, "iocal", "--pg-bin", pg18.Dir, "--engine-setting", "io_method=io_uring", "--path", path, "--out", out,
		"--progress", "none", "--size", "16MiB", "--tests", "random", "--jobs", "1", "--point", "1s", "--warmup", "0s", "--db-cache", "16MB")
	switch {
	case code == 0:
		if _, io := clitest.LastStep[*results.IOCal](t, out); io.IOMethod != "io_uring" {
			t.Errorf("io_uring ran, but iocal records %q", io.IOMethod)
		}
	case code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "refused the engine setting io_method=io_uring"):
		t.Errorf("io_uring on a build without it: exit %d, %s", code, stderr)
	}
}
