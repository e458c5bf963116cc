package limits

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
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
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, fmt.Errorf("drop the page cache of %s: %w", dir, err)
		}
		ok, err := evictTree(fd, dir)
		if err != nil {
			return false, err
		}
		all = all && ok
	}
	return all, nil
}

// evictTree evicts the regular files beneath the open directory dirfd
// (path names it in errors), each opened beneath its parent's handle
// without following a link, so that a name swapped for a link reaches
// nothing outside; it closes dirfd.
func evictTree(dirfd int, path string) (bool, error) {
	dir := os.NewFile(uintptr(dirfd), path)
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return false, fmt.Errorf("drop the page cache of %s: %w", path, err)
	}
	all := true
	for _, e := range entries {
		name := e.Name()
		switch e.Type() {
		case os.ModeDir:
			fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				all = all && gone(err)
				continue
			}
			ok, err := evictTree(fd, path+"/"+name)
			if err != nil {
				return false, err
			}
			all = all && ok
		case 0: // a regular file
			all = all && evictFile(dirfd, name)
		}
	}
	return all, nil
}

// evictFile evicts the regular file name beneath dirfd; O_NONBLOCK keeps
// a FIFO that took its name from blocking the open.
func evictFile(dirfd int, name string) bool {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return gone(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return err == nil
	}
	return unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) == nil
}

// gone says an entry went between the listing and its open (a server's
// temporary file), which leaves nothing to evict.
func gone(err error) bool { return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) }
