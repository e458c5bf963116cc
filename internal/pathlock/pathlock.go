// Package pathlock lets one calibra command at a time work on a storage
// path: two commands on one managed instance would race in initdb, in a
// reset or in a build, and measure each other.
//
// The lock file may sit in a directory other accounts can write to (a
// shared --path), so it is never opened through a symbolic link, and an
// existing one is used only when it is a plain file of calibra's own
// account: root must not truncate and write whatever file another account
// points it at.
package pathlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
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
// naming the command that holds it. A lock file that is a symbolic link,
// not a plain file, or another account's is refused (a fault.InputError).
func Acquire(path, command string) (*Lock, error) {
	name := filepath.Join(path, FileName)
	for {
		f, err := open(name, path)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed between our two opens: again
		}
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			holder := readHolder(f)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &HeldError{Path: path, Holder: holder}
			}
			return nil, err
		}
		// The holder before us may have removed the file between our open
		// and our lock: then we hold a lock nobody else will see; again.
		if !stillNamed(f, name) {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err == nil {
			fmt.Fprintf(f, "pid %d, calibra %s", os.Getpid(), command)
		}
		return &Lock{f: f}, nil
	}
}

// open opens the lock file name in dir for writing, never through a
// symbolic link: it creates the file exclusively, or else opens the one
// there, which must be a plain file of calibra's own account with no
// other name (a hard link would make us write another file).
func open(name, dir string) (*os.File, error) {
	const noFollow = unix.O_NOFOLLOW | unix.O_CLOEXEC
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o644) // safefs: new, O_EXCL|O_NOFOLLOW, in a --path that passed CheckPath
	if err == nil || !errors.Is(err, os.ErrExist) {
		return f, err
	}
	// Judge what is there before opening it (a device or FIFO is not
	// opened at all), and again after (it may have been swapped).
	var st unix.Stat_t
	if err := unix.Lstat(name, &st); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	if err := judge(name, dir, &st); err != nil {
		return nil, err
	}
	f, err = os.OpenFile(name, os.O_RDWR|unix.O_NONBLOCK|noFollow, 0) // safefs: no link followed, no FIFO waited on; fstat checks it below
	if errors.Is(err, unix.ELOOP) {
		st.Mode = unix.S_IFLNK
		return nil, judge(name, dir, &st)
	}
	if err != nil {
		return nil, err
	}
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if err := judge(name, dir, &st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// judge refuses an existing lock file calibra must not write: a symbolic
// link, anything but a plain file, a file with another name, or another
// account's.
func judge(name, dir string, st *unix.Stat_t) error {
	fix := fmt.Sprintf("remove it (another account may have put it there) and make %s writable only by the accounts you trust", dir)
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fault.Input(fix, "the lock file %s is a symbolic link, which calibra does not follow", name)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fault.Input(fix, "the lock file %s is not a plain file", name)
	case int(st.Uid) != os.Geteuid():
		return fault.Input(fix, "the lock file %s belongs to the account with uid %d, not to calibra's (uid %d)", name, st.Uid, os.Geteuid())
	case st.Nlink > 1:
		return fault.Input(fix, "the lock file %s has other names (hard links), which calibra does not write through", name)
	}
	return nil
}

// stillNamed reports whether name still names the open file f.
func stillNamed(f *os.File, name string) bool {
	var held, named unix.Stat_t
	return unix.Fstat(int(f.Fd()), &held) == nil && unix.Lstat(name, &named) == nil &&
		held.Ino == named.Ino && held.Dev == named.Dev
}

// readHolder reads who holds the lock from the open file (never by name:
// the name may since point elsewhere).
func readHolder(f *os.File) string {
	b, _ := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, 1<<10), 1<<10))
	return strings.TrimSpace(string(b))
}

// Release removes the lock file and gives up the lock; safe on nil. The
// name is removed only while it still names the lock's file.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	if stillNamed(l.f, l.f.Name()) {
		os.Remove(l.f.Name()) // safefs: only while the name still names the lock's file (checked above)
	}
	l.f.Close()
	l.f = nil
}
