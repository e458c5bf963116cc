package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Cleanup removes what a killed calibra left of a lab under path: its
// mounts, loop devices, nbdfuse and NBD server processes, cache directory,
// then the lab directory itself, platter included. stopServer is called
// first with the lab's file system while it is still mounted, to stop a
// database server a killed run left on it. It reports whether there was a
// lab to remove.
func Cleanup(path string, stopServer func(mount string) error) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	root := filepath.Join(abs, DirName)
	if _, err := os.Lstat(root); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	// Only a lab directory of calibra's own is taken apart: what it
	// records (the cache's place, a loop device) is then calibra's word.
	if err := safefs.CheckDir(abs, ""); err != nil {
		return false, err
	}
	if err := safefs.Own(root); err != nil {
		return false, err
	}
	var errs []error
	mounts := mountsUnder(root)
	fs := filepath.Join(root, mountName)
	for _, m := range mounts {
		if m == fs && stopServer != nil {
			// Best effort: the platter, and the database on it, go anyway
			// (a file system that went read-only cannot be emptied).
			_ = stopServer(fs)
		}
	}
	var st state
	if data, err := readRecord(statePath(root)); err == nil {
		_ = json.Unmarshal(data, &st)
	}
	// Deepest first: the file system before the FUSE mount under it.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if m != fs {
			continue
		}
		if err := unmount(m); err != nil {
			errs = append(errs, err)
		}
	}
	if loops := loopsOf(filepath.Join(root, "fuse", "disk"), st.Loop); len(loops) > 0 {
		losetup, err := proc.Find("losetup", "losetup on PATH")
		if err != nil {
			errs, loops = append(errs, err), nil
		}
		for _, loop := range loops {
			_, _ = run(context.Background(), losetup, "-d", loop)
		}
	}
	for _, pid := range labProcs(root) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, m := range mountsUnder(root) {
		if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeCaches(root, st)...)
	// The killed processes are gone once their FUSE mount is; give the
	// kernel a moment before removing the directory they served.
	for i := 0; i < 20 && len(labProcs(root)) > 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if err := safefs.RemoveAll(abs, DirName); err != nil {
		errs = append(errs, err)
	}
	return true, errors.Join(errs...)
}

// removeCaches removes the lab's cache directories, found only from the
// lab's own records in root (st among them), and only while they are
// still calibra's own: never by a name another account could have chosen.
func removeCaches(root string, st state) []error {
	var errs []error
	flash, _ := readRecord(filepath.Join(root, flashPointer))
	for _, dir := range []string{st.CacheDir, string(flash)} {
		if dir == "" || !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || !strings.HasPrefix(filepath.Base(dir), cachePrefix) {
			continue
		}
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := safefs.CheckParent(filepath.Dir(dir), ""); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := removeCache(dir); err != nil {
			errs = append(errs, fmt.Errorf("the lab's cache %s was left: %w", dir, err))
		}
	}
	return errs
}

// Leftovers lists what is still live of a lab under path (mounts, loop
// devices, processes), for tests and for clean's report.
func Leftovers(path string) []string {
	root, _ := filepath.Abs(filepath.Join(path, DirName))
	var out []string
	for _, m := range mountsUnder(root) {
		out = append(out, "mount "+m)
	}
	for _, l := range loopsOf(filepath.Join(root, "fuse", "disk"), "") {
		out = append(out, "loop device "+l)
	}
	for _, p := range labProcs(root) {
		out = append(out, "process "+strconv.Itoa(p))
	}
	return out
}

// mountsUnder lists the mount points at or below root.
func mountsUnder(root string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescape(fields[4])
		if mp == root || strings.HasPrefix(mp, root+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// loopsOf lists the loop devices backed by file, and known when given and
// still attached to it (its backing file may read as deleted when FUSE died).
func loopsOf(file, known string) []string {
	var out []string
	dirs, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, d := range dirs {
		data, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		b := strings.TrimSuffix(strings.TrimSpace(string(data)), " (deleted)")
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(d)))
		// Once the FUSE mount is detached the backing file reads as
		// "/disk", so the device recorded in the state file is matched by
		// name.
		if b == file || (dev == known && b == "/"+filepath.Base(file)) {
			out = append(out, dev)
		}
	}
	return out
}

// labProcs lists the nbdfuse, nbdkit and 'calibra lab serve' processes
// serving root.
func labProcs(root string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		name := filepath.Base(args[0])
		serve := len(args) > 2 && args[1] == "lab" && args[2] == "serve"
		if name != "nbdfuse" && name != "nbdkit" && !serve {
			continue
		}
		for _, a := range args[1:] {
			if strings.HasPrefix(a, root+"/") {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
