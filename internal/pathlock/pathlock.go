// Package pathlock lets one calibra command at a time work on a storage
// path: two commands on one managed instance would race in initdb, in a
// reset or in a build, and measure each other.
package pathlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// FileName is the lock file under the path. The kernel drops the lock when
// its holder dies, so a killed calibra never leaves the path locked.
const FileName = "calibra.lock"

// Lock is a held lock; Release gives it up.
type Lock struct {
	f *os.File
}

// HeldError says who holds the lock.
type HeldError struct {
	Path, Holder string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("another calibra is using %s (%s)", e.Path, e.Holder)
}

// Acquire takes the path's lock for command, or returns a *HeldError
// naming the command that holds it.
func Acquire(path, command string) (*Lock, error) {
	name := filepath.Join(path, FileName)
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(name)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &HeldError{Path: path, Holder: strings.TrimSpace(string(holder))}
			}
			return nil, err
		}
		// The holder before us may have removed the file between our open
		// and our lock: then we hold a lock nobody else will see; again.
		var held, named unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(name, &named) != nil || held.Ino != named.Ino {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err == nil {
			fmt.Fprintf(f, "pid %d, calibra %s", os.Getpid(), command)
		}
		return &Lock{f: f}, nil
	}
}

// Release removes the lock file and gives up the lock; safe on nil.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.f.Name())
	l.f.Close()
	l.f = nil
}
