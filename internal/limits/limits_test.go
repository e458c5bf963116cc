package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSystem lays out a cgroup tree under a temporary directory: the mounts
// file, calibra's own cgroup and a fake /sys/dev/block with one disk.
func fakeSystem(t *testing.T, mounts, self string, dirs ...string) (system, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mounts = strings.ReplaceAll(mounts, "ROOT", root)
	for name, data := range map[string]string{"mounts": mounts, "self": self} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return system{mounts: filepath.Join(root, "mounts"), self: filepath.Join(root, "self"), sysDev: filepath.Join(root, "sysdev")}, root
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The hybrid layout of this project's machine: v1 memory and blkio, an
// empty v2 at unified/.
func TestV1HybridMemoryLimit(t *testing.T) {
	sys, root := fakeSystem(t, `cgroup ROOT/memory cgroup rw,relatime,memory 0 0
cgroup ROOT/blkio cgroup rw,relatime,blkio 0 0
cgroup2 ROOT/unified cgroup2 rw,relatime 0 0
`, "7:blkio:/\n4:memory:/process_api/abc\n0::/\n", "memory/process_api/abc", "blkio", "unified")
	c, err := sys.create(Spec{MemoryBytes: 256 << 20}, "calibra-1")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "memory/process_api/abc/calibra-1")
	if got := read(t, filepath.Join(dir, "memory.limit_in_bytes")); got != "268435456" {
		t.Errorf("memory.limit_in_bytes = %q", got)
	}
	if a := c.Applied(); a.CgroupVersion != 1 || a.MemoryLimitBytes != 256<<20 || a.Cgroup != dir {
		t.Errorf("applied %+v", a)
	}
	if err := c.Attach(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "cgroup.procs")); got == "" {
		t.Error("no pid was written to cgroup.procs")
	}
	// A real cgroup's files vanish with it; the fake's must go first.
	for _, f := range []string{"memory.limit_in_bytes", "cgroup.procs"} {
		os.Remove(filepath.Join(dir, f))
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s was not removed", dir)
	}
}

func TestV2MemoryLimitEnablesTheController(t *testing.T) {
	sys, root := fakeSystem(t, "cgroup2 ROOT/fs cgroup2 rw 0 0\n", "0::/calibra.scope\n", "fs/calibra.scope")
	ctl := filepath.Join(root, "fs/calibra.scope/cgroup.subtree_control")
	if err := os.WriteFile(ctl, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sys.create(Spec{MemoryBytes: 1 << 30}, "calibra-2")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := read(t, ctl); got != "+memory" {
		t.Errorf("subtree_control = %q, want +memory", got)
	}
	if got := read(t, filepath.Join(root, "fs/calibra.scope/calibra-2/memory.max")); got != "1073741824" {
		t.Errorf("memory.max = %q", got)
	}
	if c.Applied().CgroupVersion != 2 || c.fd < 0 {
		t.Errorf("applied %+v, fd %d", c.Applied(), c.fd)
	}
}

func TestNoCgroupFileSystemSaysSo(t *testing.T) {
	sys, _ := fakeSystem(t, "proc /proc proc rw 0 0\n", "0::/\n")
	if _, err := sys.create(Spec{MemoryBytes: 1 << 30}, "x"); err == nil || !strings.Contains(err.Error(), "no cgroup file system") {
		t.Fatalf("err = %v", err)
	}
}

func TestIOLimitsNeedABlockDevice(t *testing.T) {
	sys, root := fakeSystem(t, "cgroup ROOT/blkio cgroup rw,blkio 0 0\n", "1:blkio:/\n", "blkio")
	_, err := sys.create(Spec{Path: root, ReadIOPS: 100}, "x")
	if err == nil || !strings.Contains(err.Error(), "not a block device") {
		t.Fatalf("err = %v", err)
	}
}

// On a real machine as root: create, limit, and remove a memory cgroup.
func TestRealMemoryCgroup(t *testing.T) {
	c, err := New(Spec{MemoryBytes: 64 << 20})
	if err != nil {
		t.Skipf("no memory cgroup here: %v", err)
	}
	dir := c.Applied().Cgroup
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there", dir)
	}
}

// clean removes the cgroups of dead runs, in every hierarchy, and leaves
// a live run's and anyone else's alone.
func TestRemoveStaleTakesOnlyDeadRunsCgroups(t *testing.T) {
	sys, root := fakeSystem(t, `cgroup ROOT/memory cgroup rw,relatime,memory 0 0
cgroup ROOT/blkio cgroup rw,relatime,blkio 0 0
cgroup2 ROOT/unified cgroup2 rw 0 0
`, "", "memory/user/calibra-100", "memory/user/calibra-100-2", "memory/user/calibra-200", "memory/user/calibra-200-1", "memory/user/calibra-x", "memory/user/other-100",
		"blkio/calibra-100", "unified/a/b/calibra-100", "memory/user/calibra-300/child")
	alive := func(pid int) bool { return pid == 200 }
	removed, err := sys.removeStale(alive)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"memory/user/calibra-100", "memory/user/calibra-100-2", "blkio/calibra-100", "unified/a/b/calibra-100"}
	if len(removed) != len(want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(root, w)); err == nil {
			t.Errorf("%s is left", w)
		}
	}
	// A live run's, a name that is no PID, another program's, and one
	// that is not empty stay.
	for _, keep := range []string{"memory/user/calibra-200", "memory/user/calibra-200-1", "memory/user/calibra-x", "memory/user/other-100", "memory/user/calibra-300/child"} {
		if _, err := os.Stat(filepath.Join(root, keep)); err != nil {
			t.Errorf("%s was removed", keep)
		}
	}
}

// SyncFS syncs the file system of each directory it is given, and names
// the one it cannot open.
func TestSyncFSNamesWhatItCannotSync(t *testing.T) {
	dir := t.TempDir()
	if err := SyncFS(dir, dir); err != nil {
		t.Fatalf("SyncFS(%s): %v", dir, err)
	}
	gone := filepath.Join(dir, "gone")
	if err := SyncFS(dir, gone); err == nil || !strings.Contains(err.Error(), gone) {
		t.Fatalf("SyncFS of a missing directory: %v, want an error naming %s", err, gone)
	}
}
