// Package testenv holds what calibra's tests need from the machine: storage
// the unprivileged server account can reach, loop devices, the servers and
// tools CI requires, and managed servers started for one test.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Required says whether CI demands name (CALIBRA_TEST_REQUIRE, a comma-
// separated list such as postgres,mariadb): then a missing prerequisite
// fails the test instead of skipping it.
func Required(name string) bool {
	for _, r := range strings.Split(os.Getenv("CALIBRA_TEST_REQUIRE"), ",") {
		if strings.TrimSpace(r) == name {
			return true
		}
	}
	return false
}

// Need skips t when a prerequisite is missing (missing says what, install
// how to get it), or fails it when CALIBRA_TEST_REQUIRE names name; and
// skips it under -short, as it uses a real server or tool.
func Need(t testing.TB, name string, missing error, install string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s; run without -short", name)
	}
	if missing == nil {
		return
	}
	if Required(name) {
		t.Fatalf("%s is required here (CALIBRA_TEST_REQUIRE): %v", name, missing)
	}
	t.Skipf("%v (%s)", missing, install)
}

// NeedVersions is Need for a server of which installed are the major
// versions here: it also fails when CALIBRA_TEST_REQUIRE names a version
// (postgresql18) that is not among them.
func NeedVersions(t testing.TB, name string, installed []int, install string) {
	t.Helper()
	var missing error
	if len(installed) == 0 {
		missing = fmt.Errorf("no %s server installed", name)
	}
	Need(t, name, missing, install)
	for _, r := range strings.Split(os.Getenv("CALIBRA_TEST_REQUIRE"), ",") {
		r = strings.TrimSpace(r)
		major, err := strconv.Atoi(strings.TrimPrefix(r, name))
		if strings.HasPrefix(r, name) && err == nil && !slices.Contains(installed, major) {
			t.Fatalf("%s is required here (CALIBRA_TEST_REQUIRE): found versions %v", r, installed)
		}
	}
}

// Start starts e for one test; e and every process it started stop when
// the test ends.
func Start(t testing.TB, e engine.Engine) *proc.Group {
	t.Helper()
	group := proc.NewGroup()
	t.Cleanup(func() { _ = group.StopAll(time.Minute) })
	t.Cleanup(func() { _ = e.Stop() })
	if _, err := e.Start(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	return group
}

// StorageDir makes a directory the unprivileged server account can reach
// (t.TempDir's parents are private to root), removed when the test ends.
func StorageDir(t testing.TB) string {
	t.Helper()
	dir, remove, err := NewStorageDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return dir
}

// NewStorageDir is StorageDir for what outlives one test (an instance a
// test binary shares): the caller removes it. Both levels are made as
// calibra makes a directory in a shared place (safefs.PrivateTemp: a
// random name, made exclusively) and opened to the server's account
// through their handles.
func NewStorageDir() (dir string, remove func(), err error) {
	top, err := safefs.PrivateTemp(os.TempDir(), "calibra-test-")
	if err != nil {
		return "", nil, err
	}
	// Tests plant other accounts' links in it: removed by handle.
	remove = func() { _ = safefs.RemoveAll(filepath.Dir(top), filepath.Base(top)) }
	if err = reachable(top, true); err == nil {
		if dir, err = safefs.PrivateTemp(top, "s"); err == nil {
			err = reachable(dir, false)
		}
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return dir, remove, nil
}

// topDirFlag is FS_TOPDIR_FL in linux/fs.h, which x/sys/unix lacks.
const topDirFlag = 0x00020000

// reachable lets the server's account into dir (0755), which the caller
// has just made, through a handle on it; spread also marks it the top of
// directory hierarchies (chattr +T), so that ext4 puts each directory made
// in it, and that directory's files, in a block group of its own choosing
// rather than beside dir. Without a journal (this machine's root file
// system) ext4 passes over each inode freed in the last minutes at every
// create (recently_deleted): in the groups beside the temporary directory,
// churned by every earlier test's data directories, an initdb took 0.78
// CPU-seconds against 0.32 in a group of its own (2026-11-29), and a run
// of the suite spent 24 of its CPU-seconds creating files (perf). The
// flag is best effort: other file systems have none.
func reachable(dir string, spread bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chmod(0o755); err != nil {
		return err
	}
	if !spread {
		return nil
	}
	fd := int(f.Fd())
	if flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil {
		_ = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|topDirFlag))
	}
	return nil
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
	if err := os.WriteFile(backing, nil, 0o644); err != nil { // safefs: in the test's own t.TempDir, 0700
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

// Stranger is the account nobody, which plays another local account (an
// attacker on a shared host); the test is skipped without root (needed
// to act as it) or without the account.
func Stranger(t testing.TB) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as another local account needs root to switch accounts")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no 'nobody' account to play another local account: %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// AsStranger runs the shell script as the Stranger account, with args as
// $1, $2..., and fails the test if it fails: what another local account
// can do, it does.
func AsStranger(t testing.TB, script string, args ...string) {
	t.Helper()
	uid, gid := Stranger(t)
	cmd := exec.Command("/bin/sh", append([]string{"-ec", script, "stranger"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as the account nobody: %v\n%s", err, out)
	}
}

// FakeServer starts a process named name (a copy of sleep) working in dir
// for secs seconds, as a server a killed calibra left behind would, and
// returns its PID; it is killed when the test ends.
func FakeServer(t testing.TB, name, dir, secs string) int {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(fake, data, 0o755); err != nil { // safefs: in t.TempDir, root's and private
		t.Fatal(err)
	}
	cmd := exec.Command(fake, secs)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd.Process.Pid
}

// canaryText is what a canary file holds: a line of a shadow file, so an
// error that quotes it is plain to see.
const canaryText = "root:$6$canary-secret:19000:0:99999:7:::\n"

// Canary makes a root 0600 file outside every path a test gives calibra,
// for another account's links to aim at, and returns its path and a check
// that fails the test if calibra wrote, truncated, re-moded or removed it.
func Canary(t testing.TB) (path string, intact func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(path, []byte(canaryText), 0o600); err != nil { // safefs: in t.TempDir, root's and private
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		data, err := os.ReadFile(path)
		st, serr := os.Lstat(path)
		if err != nil || serr != nil || string(data) != canaryText || st.Mode() != 0o600 {
			t.Errorf("root's canary %s was changed: %d bytes, %v (%v)", path, len(data), st.Mode(), err)
		}
	}
}
