package pathlock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestOneCommandAtATime(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(dir, "oltp run")
	if err != nil {
		t.Fatal(err)
	}
	// A second holder is told who has the path. flock locks belong to the
	// open file, so a second Acquire in this process is refused too.
	_, err = Acquire(dir, "oltp build")
	var held *HeldError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, "calibra oltp run") {
		t.Fatalf("second acquire: %v, want it refused naming the first", err)
	}
	first.Release()
	if _, err := os.Stat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("the lock file is left after release: %v", err)
	}
	second, err := Acquire(dir, "oltp build")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	second.Release()
}

// A dead holder's lock file does not lock the path: the kernel released it.
func TestADeadHoldersLockIsTakenOver(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, FileName)
	// flock(1) holds the lock in a child that then dies.
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock program")
	}
	if out, err := exec.Command("flock", name, "true").CombinedOutput(); err != nil {
		t.Fatalf("flock: %v %s", err, out)
	}
	l, err := Acquire(dir, "oltp run")
	if err != nil {
		t.Fatalf("a dead holder's lock: %v", err)
	}
	l.Release()
}
