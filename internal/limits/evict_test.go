package limits

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of path in the OS page cache.
func resident(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// cached writes a 4 MiB file at path and reads it back, so its pages are
// in the cache.
func cached(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
}

// A cold start's drop leaves none of the storage's files in the page
// cache, in subdirectories too, and every other file's pages where they
// were: one a link under the directory points at, beside a FIFO that must
// not block it.
func TestDropCachesEvictsOnlyTheStoragesFiles(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skipf("%s is on tmpfs, whose pages are the files themselves: run with TMPDIR on a disk", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "base", "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	data := []string{filepath.Join(dir, "top"), filepath.Join(dir, "base", "1", "table")}
	for _, f := range data {
		cached(t, f)
	}
	outside := filepath.Join(other, "outside")
	cached(t, outside)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := resident(t, outside)
	if before == 0 || resident(t, data[1]) == 0 {
		t.Fatal("the files written were not in the page cache to begin with")
	}

	all, err := DropCaches(dir)
	if err != nil || !all {
		t.Fatalf("DropCaches: %v, %v", all, err)
	}
	for _, f := range data {
		if n := resident(t, f); n != 0 {
			t.Errorf("%s: %d pages still cached", f, n)
		}
	}
	if n := resident(t, outside); n < before {
		t.Errorf("a file outside the storage lost %d of its %d cached pages", before-n, before)
	}
}
