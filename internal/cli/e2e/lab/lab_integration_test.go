//go:build integration

package lab

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
)

// TestLabInterruptLeavesNothing: Ctrl-C while the lab is up (just built,
// and later while a database is being built on it) takes the whole stack
// down: no mount, loop device, FUSE mount or nbdkit remains.
func TestLabInterruptLeavesNothing(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	for _, after := range []time.Duration{0, 3 * time.Second} {
		dir := clitest.StorageDir(t)
		code, stderr := clitest.InterruptChild(t, "calibra: lab up", after, "oltp", "build", "--warehouses", "1", "--lab", "hdd",
			"--path", dir, "--out", filepath.Join(dir, "run"), "--progress", "plain", "--db-cache", "64MB")
		if code != fault.ExitInterrupted {
			t.Fatalf("SIGINT %s after the lab came up: exit %d, want %d; stderr:\n%s", after, code, fault.ExitInterrupted, stderr)
		}
		clitest.NoLabLeft(t, dir)
		if code, _, stderr := clitest.Run(t, "clean", "--path", dir); code != 0 {
			t.Fatalf("clean: exit %d: %s", code, stderr)
		}
	}
}

// TestCleanRemovesAKilledLab: kill -9 of calibra leaves the stack up;
// 'calibra clean' removes all of it, the platter included.
func TestCleanRemovesAKilledLab(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	dir := clitest.StorageDir(t)
	cmd := clitest.Command("oltp", "build", "--warehouses", "1", "--lab", "hdd", "--path", dir,
		"--out", filepath.Join(dir, "run"), "--progress", "plain", "--db-cache", "64MB")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for i := 0; i < 300 && !strings.Contains(stderr.String(), "building"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if len(lab.Leftovers(dir)) == 0 {
		t.Fatalf("the killed run left no mount behind, so clean is not tested (stderr:\n%s)", stderr.String())
	}
	code, _, errOut := clitest.Run(t, "clean", "--path", dir)
	if code != 0 {
		t.Fatalf("clean: exit %d: %s", code, errOut)
	}
	clitest.NoLabLeft(t, dir)
	if _, err := os.Stat(filepath.Join(dir, lab.DirName)); !os.IsNotExist(err) {
		t.Fatalf("clean left %s: %v", lab.DirName, err)
	}
}
