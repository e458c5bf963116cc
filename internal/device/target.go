package device

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Kinds of target.
const (
	KindDir   = "directory"    // calibra writes its own files in DIR/calibra-device
	KindFile  = "file"         // an existing file, used in place
	KindBlock = "block device" // a raw device, used in place
)

// TestDir is the directory calibra creates under a directory target; it
// holds nothing but calibra's test files and is removed at the end.
const TestDir = "calibra-device"

// Target is one storage target of the sweep.
type Target struct {
	Path string // absolute, symlinks resolved
	Kind string
	// Destroy says calibra may write to a file or block device it did not
	// create (--allow-destroy names it). Directory targets are always
	// written, but only inside TestDir.
	Destroy bool
}

// writable says whether calibra may write to the target.
func (t Target) writable() bool { return t.Kind == KindDir || t.Destroy }

// worker returns the file and offset of worker w: its own file under a
// directory, else its own region of the file or device.
func (t Target) worker(w int, size int64) (file string, offset int64) {
	if t.Kind == KindDir {
		return filepath.Join(t.Path, TestDir, fmt.Sprintf("w%d", w)), 0
	}
	return t.Path, int64(w) * size
}

// Resolve makes path absolute with symlinks resolved, so that targets and
// --allow-destroy compare by what they name.
func Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// DirTarget is a directory target; the caller has checked that it exists,
// is writable and has room. A TestDir left by an earlier run is reused, but
// not one that is, or holds, a symbolic link: fio would follow it and write
// outside the path.
func DirTarget(path string) (Target, error) {
	p, err := Resolve(path)
	if err != nil {
		return Target{}, fault.Input("choose another --path", "the path %s cannot be resolved: %v", path, errors.Unwrap(err))
	}
	dir := filepath.Join(p, TestDir)
	fix := fmt.Sprintf("remove %s or choose another --path", dir)
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Target{Path: p, Kind: KindDir}, nil
	case err != nil:
		return Target{}, fault.Input(fix, "%s cannot be read: %v", dir, errors.Unwrap(err))
	case !st.IsDir():
		return Target{}, fault.Input(fix, "%s is not a directory of calibra's test files", dir)
	}
	// fio writes the worker files by name: the directory must be
	// calibra's own, which no other account can fill with links.
	if err := safefs.Own(dir); err != nil {
		return Target{}, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Target{}, fault.Input(fix, "%s cannot be read: %v", dir, errors.Unwrap(err))
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			return Target{}, fault.Input(fix, "%s holds a symbolic link, %s", dir, e.Name())
		}
	}
	return Target{Path: p, Kind: KindDir}, nil
}

// RawTarget checks an existing file or block device used in place: it must
// hold workers x size bytes, and when a spec writes, --allow-destroy must name
// it and a block device must not be mounted or otherwise in use.
func RawTarget(path string, allowDestroy []string, writers []string, need int64) (Target, error) {
	p, err := Resolve(path)
	if err != nil {
		return Target{}, fault.Input("choose another --path", "the path %s cannot be resolved: %v", path, errors.Unwrap(err))
	}
	st, err := os.Stat(p)
	if err != nil {
		return Target{}, fault.Input("choose another --path", "the path %s cannot be read: %v", path, errors.Unwrap(err))
	}
	t := Target{Path: p}
	switch {
	case st.Mode().IsRegular():
		t.Kind = KindFile
	case st.Mode()&os.ModeDevice != 0 && st.Mode()&os.ModeCharDevice == 0:
		t.Kind = KindBlock
	default:
		return Target{}, fault.Input("give a directory, a file or a block device", "the path %s is none of a directory, a file or a block device", path)
	}
	size, err := capacity(p)
	if err != nil {
		return Target{}, fault.Input("choose another --path", "the %s %s cannot be opened: %v", t.Kind, path, err)
	}
	if size < need {
		return Target{}, fault.Input("lower --size or --workers", "the %s %s holds %s but the workers need %s", t.Kind, path, FormatSize(size), FormatSize(need))
	}
	if len(writers) == 0 {
		return t, nil
	}
	for _, a := range allowDestroy {
		if r, err := Resolve(a); err == nil && r == p {
			t.Destroy = true
		}
	}
	if !t.Destroy {
		return Target{}, fault.Input(fmt.Sprintf("pass --allow-destroy %s if its contents may be lost, or use read-only specs", path),
			"the specs %s would overwrite the %s %s", strings.Join(writers, ", "), t.Kind, path)
	}
	if err := unix.Access(p, unix.W_OK); err != nil {
		return Target{}, fault.Input("choose a --path you can write to", "the %s %s is not writable (%v)", t.Kind, path, err)
	}
	if t.Kind == KindBlock {
		if err := notInUse(p); err != nil {
			return Target{}, err
		}
	}
	return t, nil
}

func capacity(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, errors.Unwrap(err)
	}
	defer f.Close()
	// Seeking to the end gives the size of a block device too.
	return f.Seek(0, io.SeekEnd)
}

// notInUse refuses a block device that the kernel says is claimed: an
// exclusive open fails with EBUSY when it or one of its partitions is
// mounted, used as swap, or part of a RAID or LVM volume.
func notInUse(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	fix := "unmount it (and its partitions) or choose a device that is not in use"
	if !errors.Is(err, unix.EBUSY) {
		return fault.Input(fix, "the block device %s cannot be opened exclusively: %v", path, err)
	}
	var st unix.Stat_t
	if unix.Stat(path, &st) == nil {
		if mnt := mountPoint(st.Rdev); mnt != "" {
			return fault.Input(fix, "the block device %s is mounted on %s", path, mnt)
		}
	}
	return fault.Input(fix, "the block device %s is in use (a mounted partition, swap, RAID or LVM)", path)
}

// mountPoint names where the device rdev or one of its partitions is
// mounted, from the mount table; "" when none is.
func mountPoint(rdev uint64) string {
	self := fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
	devs := map[string]bool{self: true}
	parts, _ := filepath.Glob(filepath.Join("/sys/dev/block", self, "*", "dev"))
	for _, p := range parts {
		if b, err := os.ReadFile(p); err == nil {
			devs[strings.TrimSpace(string(b))] = true
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint ...
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && devs[fields[2]] {
			return fields[4]
		}
	}
	return ""
}

// CheckDirect verifies that the file system accepts direct I/O (O_DIRECT)
// at path, leaving nothing behind. Some refuse it at open with EINVAL
// (ramfs, tmpfs before Linux 6.6, some FUSE file systems).
func CheckDirect(t Target) error {
	file := t.Path
	if t.Kind == KindDir {
		f, err := os.CreateTemp(t.Path, ".calibra-direct-*")
		if err != nil {
			return fault.Input("choose a --path you can write to", "cannot create a file in %s: %v", t.Path, errors.Unwrap(err))
		}
		f.Close()
		file = f.Name()
		defer os.Remove(file) // safefs: a worker file in calibra-device, made by MkdirOwn
	}
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if errors.Is(err, unix.EINVAL) {
		return fault.Input("pass --direct=false to measure buffered I/O (the page cache), or choose a --path on a disk",
			"the file system of %s (%s) refuses direct I/O (O_DIRECT)", t.Path, observe.Storage(t.Path).FS)
	}
	return fault.Input("choose another --path", "cannot open %s for direct I/O: %v", file, err)
}

// makeWorkerFiles makes TestDir as calibra's own (safefs.MkdirOwn; an
// existing one only when it is calibra's, not writable by others) and
// each worker's file in it before fio runs: made new with O_EXCL and
// O_NOFOLLOW, or one an earlier run left, taken only when it is a
// regular file of calibra's account with no other name. fio then opens
// by name files no other account can swap.
func (t Target) makeWorkerFiles(workers int) error {
	dir, err := safefs.MkdirOwn(t.Path, TestDir, 0o755)
	if err != nil {
		return err
	}
	for w := range workers {
		file, _ := t.worker(w, 0)
		f, err := safefs.CreateFile(file, 0o600)
		if err == nil {
			if err := f.Close(); err != nil {
				return err
			}
			continue
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create the worker file: %w", err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(file, &st); err != nil {
			return fmt.Errorf("the worker file: %w", err)
		}
		fix := fmt.Sprintf("remove %s (another account may have made it) or choose another --path", dir)
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			return fault.Input(fix, "%s is not a regular file of calibra's", file)
		case int(st.Uid) != os.Geteuid():
			return fault.Input(fix, "%s belongs to %s, not to calibra's account", file, safefs.Owner(st.Uid))
		case st.Nlink != 1:
			return fault.Input(fix, "%s has another name (a hard link), which fio would write through", file)
		}
	}
	return nil
}

var workerFile = regexp.MustCompile(`^w\d+$`)

// Cleanup removes calibra's test files from every directory target, and
// TestDir itself. It removes only the names calibra writes there (w<N>), so
// a stranger's file in TestDir stays, and so does TestDir then. It works
// by handle: the target is opened once and every name is removed relative
// to it, TestDir only when it is a real directory of calibra's account,
// the very one it opened; a link is never followed.
func Cleanup(targets []Target) error {
	var errs []error
	for _, t := range targets {
		if t.Kind != KindDir {
			continue
		}
		if err := cleanupDir(t.Path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func cleanupDir(path string) error {
	root, err := os.OpenRoot(path)
	if err != nil {
		return err
	}
	defer root.Close()
	before, err := root.Lstat(TestDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dir := filepath.Join(path, TestDir)
	if !before.IsDir() {
		return fmt.Errorf("%s is not a directory of calibra's test files; left as it is", dir)
	}
	sub, err := root.OpenRoot(TestDir)
	if err != nil {
		return err
	}
	defer sub.Close()
	f, err := sub.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := opened.Sys().(*syscall.Stat_t)
	if !ok || !os.SameFile(before, opened) || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not calibra's own; left as it is", dir)
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if workerFile.MatchString(e.Name()) && e.Type().IsRegular() {
			if err := sub.Remove(e.Name()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := root.Remove(TestDir); err != nil {
		errs = append(errs, fmt.Errorf("remove the test directory: %w", err))
	}
	return errors.Join(errs...)
}
