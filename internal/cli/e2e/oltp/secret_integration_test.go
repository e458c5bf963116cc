//go:build integration

package oltp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
)

// While a --dsn-file command runs, no process on the machine (calibra, or
// any child it starts) has the DSN's password on its command line.
func TestNoCommandLineHoldsThePassword(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	const password = "pw-71f3-s3cret"
	dsnFile := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(dsnFile, []byte(clitest.ExistingServer(t, path)("calibra:"+password, "calibra")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, lines, seen := clitest.StartUntil(t, "iocal: loading", "iocal", "--dsn-file", dsnFile, "--size", "64MiB", "--jobs", "1,2", "--progress", "plain",
		"--out", filepath.Join(t.TempDir(), "run"))
	if len(seen) == 0 || !strings.HasPrefix(seen[len(seen)-1], "iocal: loading") {
		t.Fatalf("iocal never started loading:\n%s", strings.Join(seen, "\n"))
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	checked := 0
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		checked++
		if strings.Contains(string(data), password) {
			t.Errorf("%s shows the password: %q", p, strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	if checked < 2 {
		t.Fatalf("read only %d command lines", checked)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	for lines.Scan() {
	}
	_ = cmd.Wait()
}
