package limits

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// DropCaches makes the next reads of the files under dirs come from the
// storage: it writes out the dirty pages of the file systems holding dirs
// (SyncFS), then evicts every regular file under dirs from the OS page
// cache (posix_fadvise DONTNEED), and no other file. It reports whether
// every file was evicted: a file calibra may not open (another account's,
// calibra not root) keeps its pages. The server must be stopped: pages a
// process maps stay.
//
// Not /proc/sys/vm/drop_caches: that empties the whole host's cache, so
// every other program reads its files from the disk again (a second load
// pays for a cold start it did not ask for), and only root may write it.
func DropCaches(dirs ...string) (bool, error) {
	if err := SyncFS(dirs...); err != nil {
		return false, err
	}
	all := true
	for _, dir := range dirs {
		d, err := safefs.OpenInputDir(dir)
		if err != nil {
			return false, fmt.Errorf("drop the page cache of %s: %w", dir, err)
		}
		ok, err := evictTree(d)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// evictTree evicts the regular files beneath the open directory dir, each
// opened beneath its parent's handle without following a link
// (safefs.OpenInputAt), so that a name swapped for a link reaches nothing
// outside; it closes dir.
func evictTree(dir *os.File) (bool, error) {
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return false, fmt.Errorf("drop the page cache of %s: %w", dir.Name(), err)
	}
	all := true
	for _, e := range entries {
		switch e.Type() {
		case os.ModeDir:
			fd, err := unix.Openat(int(dir.Fd()), e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				all = all && gone(err)
				continue
			}
			ok, err := evictTree(os.NewFile(uintptr(fd), dir.Name()+"/"+e.Name()))
			if err != nil {
				return false, err
			}
			all = all && ok
		case 0: // a regular file
			f, err := safefs.OpenInputAt(dir, e.Name())
			if err != nil {
				all = all && gone(err)
				continue
			}
			all = all && unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) == nil
			f.Close()
		}
	}
	return all, nil
}

// gone says an entry went, or became a link or another kind of file,
// between the listing and its open (a server's temporary file): nothing of
// the storage's to evict.
func gone(err error) bool {
	var refused *fault.InputError
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.As(err, &refused)
}
