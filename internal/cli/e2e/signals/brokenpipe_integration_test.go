//go:build integration

package signals

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// calibra ... 2>&1 | head: the reader goes away mid-run. SIGPIPE killed
// calibra at its next line, leaving results.json "running" and the test
// files under --path; now the writes fail and the run goes on to its end.
func TestABrokenPipeDoesNotEndTheRun(t *testing.T) {
	t.Parallel()
	clitest.RequireFio(t)
	if testing.Short() {
		t.Skip("runs fio (-short)")
	}
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	cmd := clitest.Command("device", "--path", target, "--specs", "4k-randread", "--qd", "1,2",
		"--runtime", "1s", "--ramp", "0s", "--size", "16MiB", "--out", out, "--progress", "plain")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// head reads up to the first point, and goes.
	lines := bufio.NewScanner(r)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "device: point 1/") {
	}
	r.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == -1 {
		t.Fatalf("calibra died of %v when its reader went away", ee.ProcessState)
	}
	if err != nil {
		t.Errorf("calibra: %v", err)
	}
	run, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != results.StatusComplete {
		t.Errorf("results.json says %q, want %q", run.Status, results.StatusComplete)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("test files left under --path: %v", entries)
	}
}
