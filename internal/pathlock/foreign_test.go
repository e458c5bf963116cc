package pathlock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// A lock file calibra did not make is never written: a symbolic link (to
// any file), a hard link, a FIFO, or another account's file is refused
// with one sentence, an input error, and what it names is left as it was.
func TestAForeignLockFileIsRefused(t *testing.T) {
	cases := map[string]func(t *testing.T, lock, target string){
		"symbolic link": func(t *testing.T, lock, target string) {
			if err := os.Symlink(target, lock); err != nil {
				t.Fatal(err)
			}
		},
		"dangling symbolic link": func(t *testing.T, lock, target string) {
			if err := os.Symlink(target+".absent", lock); err != nil {
				t.Fatal(err)
			}
		},
		"hard link": func(t *testing.T, lock, target string) {
			if err := os.Link(target, lock); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func(t *testing.T, lock, target string) {
			if err := syscall.Mkfifo(lock, 0o666); err != nil {
				t.Fatal(err)
			}
		},
		"another account's file": func(t *testing.T, lock, target string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another account needs root")
			}
			if err := os.WriteFile(lock, []byte("precious"), 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(lock, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(t.TempDir(), "target")
			if err := os.WriteFile(target, []byte("precious"), 0o600); err != nil {
				t.Fatal(err)
			}
			plant(t, filepath.Join(dir, FileName), target)
			l, err := Acquire(dir, "clean")
			if err == nil {
				l.Release()
				t.Fatal("the lock was taken")
			}
			var in *fault.InputError
			if !errors.As(err, &in) || strings.Count(err.Error(), ". ") > 0 || !strings.Contains(err.Error(), FileName) {
				t.Errorf("refused with %T %q, want one sentence naming the lock file (an input error)", err, err)
			}
			if data, _ := os.ReadFile(target); string(data) != "precious" {
				t.Errorf("the target now holds %q", data)
			}
			if _, err := os.Lstat(filepath.Join(dir, FileName)); err != nil {
				t.Errorf("the planted lock file is gone: %v", err)
			}
		})
	}
}

// The holder named in a refusal is read from the lock's own file, so a
// lock swapped for a link after its holder opened it cannot make calibra
// print what the link points at.
func TestTheHolderIsReadFromTheLocksFile(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(dir, "oltp run")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	_, err = Acquire(dir, "clean")
	var held *HeldError
	if !errors.As(err, &held) || !strings.HasPrefix(held.Holder, "pid ") {
		t.Fatalf("second acquire: %v", err)
	}
}
