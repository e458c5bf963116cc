package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A storage directory's parent carries ext4's top-directory flag, so the
// directory and the data under it land in a block group away from the
// churned ones beside /tmp; where the file system has no such flag the
// directory is still made.
func TestStorageDirIsPlacedApart(t *testing.T) {
	dir := StorageDir(t)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("%s: %v, %v; want a directory the server account can reach", dir, fi, err)
	}
	f, err := os.Open(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		t.Skipf("%s has no inode flags here: %v", filepath.Dir(dir), err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("%s is not on ext4 (%v): nothing to place", dir, err)
	}
	if flags&topDirFlag == 0 {
		t.Errorf("%s has flags %#x, without FS_TOPDIR_FL", filepath.Dir(dir), flags)
	}
}
