package device

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the account the tests hand a directory to, as if another
// account had made it: changing a file's owner needs root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another account needs root")
	}
}

// High: another account that owns PATH/calibra-device could swap w0 and w1
// for links after the plan's check, and root's fio wrote through them.
// calibra-device must be calibra's own, at the plan and again before fio.
func TestATestDirectoryOfAnotherAccountIsRefused(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	test := filepath.Join(dir, TestDir)
	if err := os.Mkdir(test, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(test, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := DirTarget(dir); err == nil || !strings.Contains(err.Error(), "not to calibra's account") {
		t.Errorf("DirTarget of another account's test directory: %v", err)
	}
	tg := Target{Path: dir, Kind: KindDir}
	if err := tg.makeWorkerFiles(2); err == nil || !strings.Contains(err.Error(), "not to calibra's account") {
		t.Errorf("the worker files in another account's test directory: %v", err)
	}
	if entries, _ := os.ReadDir(test); len(entries) != 0 {
		t.Errorf("calibra made files in another account's directory: %v", entries)
	}
}

// A test directory others can write is refused as well.
func TestATestDirectoryOthersCanWriteIsRefused(t *testing.T) {
	dir := t.TempDir()
	test := filepath.Join(dir, TestDir)
	if err := os.Mkdir(test, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(test, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := DirTarget(dir); err == nil || !strings.Contains(err.Error(), "writable by other accounts") {
		t.Errorf("DirTarget: %v", err)
	}
}

// The worker files are made by calibra before fio opens them by name: new
// ones 0600 with O_EXCL|O_NOFOLLOW; a leftover regular file of calibra's
// is reused; a link, a FIFO or a hard link is refused.
func TestWorkerFilesAreCalibrasOwn(t *testing.T) {
	dir := t.TempDir()
	tg := Target{Path: dir, Kind: KindDir}
	if err := tg.makeWorkerFiles(2); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"w0", "w1"} {
		st, err := os.Lstat(filepath.Join(dir, TestDir, w))
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", w, st, err)
		}
	}
	if err := tg.makeWorkerFiles(2); err != nil {
		t.Fatalf("leftover worker files: %v", err)
	}
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	w1 := filepath.Join(dir, TestDir, "w1")
	plant := map[string]func() error{
		"a link":      func() error { return os.Symlink(canary, w1) },
		"a FIFO":      func() error { return syscall.Mkfifo(w1, 0o600) },
		"a hard link": func() error { return os.Link(canary, w1) },
	}
	for name, do := range plant {
		if err := os.Remove(w1); err != nil {
			t.Fatal(err)
		}
		if err := do(); err != nil {
			t.Fatal(err)
		}
		if err := tg.makeWorkerFiles(2); err == nil {
			t.Errorf("%s at w1 was accepted", name)
		}
	}
	if data, _ := os.ReadFile(canary); string(data) != "keep" {
		t.Errorf("the canary now holds %q", data)
	}
}
