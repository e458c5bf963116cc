// Package testenv holds what calibra's tests need from the machine: storage
// the unprivileged server account can reach, and loop devices.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// StorageDir makes a directory the unprivileged server account can reach
// (t.TempDir's parents are private to root), removed when the test ends.
func StorageDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "calibra-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// LoopDevice attaches a sparse file of size bytes as a loop device, a disk
// of its own for the test, detached when it ends; it skips the test where
// no loop device can be had (not root, none left).
func LoopDevice(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a loop device")
	}
	backing := filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(backing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(backing, size); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		t.Skipf("no loop device: %v", err)
	}
	loop := strings.TrimSpace(string(b))
	t.Cleanup(func() { _ = exec.Command("losetup", "--detach", loop).Run() })
	return loop
}

// ProcessesUnder lists the live processes whose working directory is
// under dir: a server works in its data directory, so none is left when
// this is empty (a stale pid file proves nothing after a kill).
func ProcessesUnder(dir string) []string {
	var pids []string
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, c := range cwds {
		if target, err := os.Readlink(c); err == nil && strings.HasPrefix(target, dir) {
			pids = append(pids, filepath.Base(filepath.Dir(c)))
		}
	}
	return pids
}
