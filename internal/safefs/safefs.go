// Package safefs is the one rule for where calibra writes. calibra runs as
// root on hosts other accounts share, so it creates, opens for writing,
// mounts on, locks or removes only beneath a directory that no other
// account can change: the directory and each of its parents are owned by
// root or calibra's account and writable by no one else, as OpenSSH's
// StrictModes asks of a home directory. A sticky directory such as /tmp
// or /dev/shm may hold calibra's own entries (no other account can rename
// or remove them there) but is never written into by name.
//
// Once a directory passes, a path beneath it names the same thing for
// as long as calibra runs: only root and calibra's account could swap
// one of its parts. That is what lets calibra hand paths to the programs
// it starts (fio, nbdkit, the servers). Inputs calibra reads but did not
// write are opened without following a final link or blocking on a FIFO,
// and must be regular files.
package safefs

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
)

// stat is what the rule reads of a directory.
type stat struct {
	uid    uint32
	mode   uint32
	dir    bool
	link   bool
	sticky bool
}

func lstat(path string) (stat, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return stat{}, err
	}
	return stat{
		uid:    st.Uid,
		mode:   st.Mode,
		dir:    st.Mode&unix.S_IFMT == unix.S_IFDIR,
		link:   st.Mode&unix.S_IFMT == unix.S_IFLNK,
		sticky: st.Mode&unix.S_ISVTX != 0,
	}, nil
}

// ours says whether uid is root's or calibra's account.
func ours(uid uint32) bool { return uid == 0 || int(uid) == os.Geteuid() }

// othersWrite says whether group or others may write the directory.
func (s stat) othersWrite() bool { return s.mode&0o022 != 0 }

// Owner names the account of uid for an error sentence.
func Owner(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return fmt.Sprintf("the account %s (uid %s)", u.Username, id)
	}
	return "the account with uid " + id
}

// CheckDir checks that calibra may write by name inside the existing
// directory path: it and every parent pass the rule, and path itself is
// writable by no other account even if sticky. fix is the cure the error
// gives; "" gives the usual one for what failed.
func CheckDir(path, fix string) error { return check(path, fix, false, swapHarm) }

// CheckParent checks that calibra may create its own entries in path: as
// CheckDir, but path itself may be a sticky directory any account can
// write (/tmp, /dev/shm), whose entries calibra made stay calibra's.
func CheckParent(path, fix string) error { return check(path, fix, true, swapHarm) }

// swapHarm is what another account could do through a directory that
// fails the rule for writes.
const swapHarm = "swap what calibra writes there for a link"

// check applies the rule to path; harm says, in the refusal, what another
// account could do through it.
func check(path, fix string, stickyOK bool, harm string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	// A link on the way is followed each time calibra uses the path: it
	// must be ours, in a directory that passes the rule, or another
	// account could point it elsewhere after this check.
	for p := abs; p != filepath.Dir(p); p = filepath.Dir(p) {
		st, err := lstat(p)
		if err != nil || !st.link {
			continue
		}
		if !ours(st.uid) {
			return fault.Input(or(fix, "give the path the link leads to"), "%s is a symbolic link of %s, who could point it elsewhere", p, Owner(st.uid))
		}
		if err := check(filepath.Dir(p), fix, true, harm); err != nil {
			return err
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fault.Input("check the path", "%s cannot be resolved: %v", path, unwrap(err))
	}
	// From path up to /.
	for dir, first := real, true; ; dir, first = filepath.Dir(dir), false {
		st, err := lstat(dir)
		if err != nil {
			return fault.Input("check the path", "%s cannot be read: %v", dir, err)
		}
		switch {
		case !st.dir:
			return fault.Input("give a directory", "%s is not a directory", dir)
		case !ours(st.uid):
			return fault.Input(or(fix, "run calibra as that account, or choose a directory only calibra's account (or root) can change"), "%s belongs to %s, who could %s", dir, Owner(st.uid), harm)
		case st.othersWrite() && !(st.sticky && (stickyOK || !first)):
			// Below a sticky parent only the child's owner, checked
			// already, can rename the child.
			return fault.Input(or(fix, "take other accounts' write permission away (chmod go-w "+dir+"), or choose another directory"), "%s is writable by other accounts, who could %s", dir, harm)
		}
		if dir == "/" || dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// MkdirOwn makes the directory name inside parent (which must pass
// CheckParent), or takes an existing one only when it is a real directory
// of calibra's account that no other account can write. perm is 0700 or,
// where another account must read (the server's, a report's reader),
// 0755. It returns the directory's path.
func MkdirOwn(parent, name string, perm os.FileMode) (string, error) {
	if err := CheckParent(parent, ""); err != nil {
		return "", err
	}
	return mkdirOwn(filepath.Join(parent, name), perm)
}

// MkdirAllOwn is MkdirOwn for each missing directory from the deepest
// existing parent of path down: the existing part must pass CheckParent,
// each new part is calibra's own.
func MkdirAllOwn(path string, perm os.FileMode) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var missing []string
	top := abs
	for {
		if _, err := os.Lstat(top); err == nil || !errors.Is(err, os.ErrNotExist) {
			break
		}
		missing = append([]string{filepath.Base(top)}, missing...)
		top = filepath.Dir(top)
	}
	if len(missing) == 0 {
		if err := CheckDir(abs, ""); err != nil {
			return "", err
		}
		return abs, nil
	}
	if err := CheckParent(top, ""); err != nil {
		return "", err
	}
	dir := top
	for _, m := range missing {
		if dir, err = mkdirOwn(filepath.Join(dir, m), perm); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func mkdirOwn(path string, perm os.FileMode) (string, error) {
	err := unix.Mkdir(path, uint32(perm.Perm()))
	if err == nil {
		// The umask may have taken bits away; set exactly perm.
		return path, os.Chmod(path, perm.Perm())
	}
	if !errors.Is(err, unix.EEXIST) {
		return "", fault.Input("choose a directory calibra's account can write to", "cannot create %s: %v", path, err)
	}
	return path, Own(path)
}

// Own checks that path, which calibra made earlier or found recorded in
// one of its own files, is still a real directory of calibra's account
// that no other account can write.
func Own(path string) error {
	fix := fmt.Sprintf("remove %s (another account may have made it) or choose another path", path)
	st, err := lstat(path)
	switch {
	case err != nil:
		return fault.Input(fix, "%s cannot be read: %v", path, err)
	case st.link:
		return fault.Input(fix, "%s is a symbolic link, which calibra does not follow", path)
	case !st.dir:
		return fault.Input(fix, "%s is not a directory", path)
	case int(st.uid) != os.Geteuid():
		return fault.Input(fix, "%s belongs to %s, not to calibra's account", path, Owner(st.uid))
	case st.othersWrite():
		return fault.Input(fix, "%s is writable by other accounts", path)
	}
	return nil
}

// PrivateTemp makes a new directory with a random name, mode 0700, in a
// shared place such as /dev/shm (which must pass CheckParent): never a
// predictable name there. Record its path in a file of calibra's own to
// find it again, and check it with Own before use.
func PrivateTemp(dir, prefix string) (string, error) {
	if err := CheckParent(dir, "give a directory root owns, such as /dev/shm"); err != nil {
		return "", err
	}
	return os.MkdirTemp(dir, prefix) // mkdtemp: a random name, 0700, made exclusively
}

// CreateFile creates a new file in a directory that passed the rule:
// O_EXCL and O_NOFOLLOW, so an entry that appeared there is never opened.
func CreateFile(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, perm)
}

// openRegular opens path with flag, never through a final link and
// never blocking on a FIFO, and keeps it only when it is a regular file;
// the refusals are one sentence each, with the fixes given.
func openRegular(path string, flag int, perm os.FileMode, linkFix, linkWhy, otherFix string) (*os.File, error) {
	return openRegularAt(unix.AT_FDCWD, path, path, flag, perm, linkFix, linkWhy, otherFix)
}

// openRegularAt is openRegular for name beneath the directory dirfd
// (unix.AT_FDCWD: the working directory), path naming it in refusals.
func openRegularAt(dirfd int, name, path string, flag int, perm os.FileMode, linkFix, linkWhy, otherFix string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, flag|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fault.Input(linkFix, "%s is a symbolic link, which %s", path, linkWhy)
	case errors.Is(err, unix.ENXIO): // a FIFO no one reads, opened to write
		return nil, fault.Input(otherFix, "%s is not a regular file", path)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fault.Input(otherFix, "%s is not a regular file", path)
	}
	// I/O on a regular file never blocks; clear the flag all the same.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// RemoveAll removes name inside parent by handle: parent is opened once
// and every removal below is relative to it (unlinkat), so a directory
// swapped for a link mid-removal leads nowhere outside. parent must pass
// CheckDir, or be calibra's own (Own).
func RemoveAll(parent, name string) error {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.RemoveAll(name)
}

// Remove unlinks name inside parent by handle (parent opened once, the
// unlink relative to it): no "..", no link in name leads outside parent.
// parent must pass CheckDir, or be calibra's own (Own); a name that is not
// there is os.ErrNotExist.
func Remove(parent, name string) error {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Remove(name)
}

// Rename renames oldname to newname, both inside parent, by handle
// (parent opened once, the rename relative to it), as Remove unlinks.
func Rename(parent, oldname, newname string) error {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Rename(oldname, newname)
}

func or(fix, usual string) string {
	if fix != "" {
		return fix
	}
	return usual
}

func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
