// Package limits bounds what the server under test may use, so that a
// measurement reaches the storage and not a cache: a memory cgroup bounds
// its page cache (the study's os_cache_limit) and block-I/O throttling caps
// its IOPS and bandwidth on the device under test (storage.limit). The
// cgroups are children of calibra's own, removed by Close.
//
// Both cgroup versions are handled: v1 (and the hybrid layout, where the
// memory and blkio controllers are v1 hierarchies) and the unified v2.
package limits

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/results"
)

// Spec is what to bound; zero fields are left alone.
type Spec struct {
	// MemoryBytes is the server's memory limit: shared buffers, backends
	// and the page cache its reads fill. The kernel reclaims page cache
	// first, so the page cache stays under it.
	MemoryBytes int64
	// Path is on the storage under test; the I/O limits apply to the disk
	// under it.
	Path                string
	ReadIOPS, WriteIOPS int64
	ReadBPS, WriteBPS   int64 // bytes per second
}

func (s Spec) io() bool { return s.ReadIOPS > 0 || s.WriteIOPS > 0 || s.ReadBPS > 0 || s.WriteBPS > 0 }

// Cgroup is the set of cgroups holding the server (one per v1 controller,
// one in v2).
type Cgroup struct {
	version int
	dirs    []string // created, removed by Close (children first)
	procs   []string // the files a pid is written to
	fd      int      // v2: the cgroup directory, for clone3 CLONE_INTO_CGROUP
	applied results.AppliedLimits
}

// system is where the cgroup file systems are; tests point it elsewhere.
type system struct {
	mounts, self string // /proc/self/mounts, /proc/self/cgroup
	sysDev       string // /sys/dev/block
}

var host = system{mounts: "/proc/self/mounts", self: "/proc/self/cgroup", sysDev: "/sys/dev/block"}

// New creates the cgroups and applies spec, or says why it cannot.
func New(spec Spec) (*Cgroup, error) {
	return host.create(spec, fmt.Sprintf("%s%d-%d", namePrefix, os.Getpid(), made.Add(1)))
}

// namePrefix, the creator's PID and a sequence name each cgroup calibra
// makes: one process may hold several at once (the tests run commands
// side by side in one process).
const namePrefix = "calibra-"

var made atomic.Int64

// cgroupPID is the PID in the name of a cgroup calibra made
// (calibra-PID, or calibra-PID-N), or false.
func cgroupPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, namePrefix)
	if !ok {
		return 0, false
	}
	rest, _, _ = strings.Cut(rest, "-")
	pid, err := strconv.Atoi(rest)
	return pid, err == nil && pid > 0
}

// RemoveStale removes the empty cgroups that dead calibra runs left (a
// killed calibra cannot remove its own), in every hierarchy calibra uses:
// those named for a process that no longer exists. The kernel refuses to
// remove a cgroup that still holds a process. It returns those removed.
func RemoveStale() ([]string, error) {
	return host.removeStale(func(pid int) bool { return unix.Kill(pid, 0) != unix.ESRCH })
}

func (sys system) removeStale(alive func(pid int) bool) ([]string, error) {
	m, err := sys.readMounts()
	if err != nil {
		return nil, err
	}
	roots := []string{m.v1["memory"], m.v1["blkio"], m.v2}
	var removed []string
	for _, root := range roots {
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() || path == root {
				return nil
			}
			pid, ok := cgroupPID(d.Name())
			if !ok {
				return nil
			}
			if !alive(pid) && os.Remove(path) == nil { // safefs: an empty cgroup in cgroupfs, which only root can change
				removed = append(removed, path)
			}
			return filepath.SkipDir // calibra's cgroups have no children of their own
		})
	}
	return removed, nil
}

func (sys system) create(spec Spec, name string) (out *Cgroup, err error) {
	mounts, err := sys.readMounts()
	if err != nil {
		return nil, err
	}
	self, err := sys.readSelf()
	if err != nil {
		return nil, err
	}
	var dev string
	if spec.io() {
		if dev, err = sys.disk(spec.Path); err != nil {
			return nil, err
		}
	}
	c := &Cgroup{fd: -1}
	defer func() {
		if err != nil {
			c.Close()
			out = nil
		}
	}()
	v1mem, v1io := mounts.v1["memory"], mounts.v1["blkio"]
	switch {
	case (spec.MemoryBytes == 0 || v1mem != "") && (!spec.io() || v1io != ""):
		err = c.createV1(spec, dev, v1mem, v1io, self, name)
	case mounts.v2 != "":
		err = c.createV2(spec, dev, mounts.v2, self[""], name)
	default:
		return nil, errors.New("no cgroup file system with the memory and blkio (v1) or io (v2) controllers is mounted")
	}
	if err != nil {
		return c, err
	}
	c.record(spec, dev)
	return c, nil
}

// createV1 makes the cgroup in the v1 memory and blkio hierarchies
// (mounted at mem and io; self is our own cgroup in each).
func (c *Cgroup) createV1(spec Spec, dev, mem, io string, self map[string]string, name string) error {
	c.version = 1
	if spec.MemoryBytes > 0 {
		dir, err := c.mkdir(mem, self["memory"], name)
		if err != nil {
			return err
		}
		if err := write(dir, "memory.limit_in_bytes", strconv.FormatInt(spec.MemoryBytes, 10)); err != nil {
			return err
		}
	}
	if !spec.io() {
		return nil
	}
	dir, err := c.mkdir(io, self["blkio"], name)
	if err != nil {
		return err
	}
	for _, l := range []struct {
		file string
		v    int64
	}{{"blkio.throttle.read_iops_device", spec.ReadIOPS}, {"blkio.throttle.write_iops_device", spec.WriteIOPS},
		{"blkio.throttle.read_bps_device", spec.ReadBPS}, {"blkio.throttle.write_bps_device", spec.WriteBPS}} {
		if l.v > 0 {
			if err := write(dir, l.file, fmt.Sprintf("%s %d", dev, l.v)); err != nil {
				return err
			}
		}
	}
	return nil
}

// createV2 makes the cgroup in the unified hierarchy mounted at root,
// under our own cgroup self.
func (c *Cgroup) createV2(spec Spec, dev, root, self, name string) error {
	c.version = 2
	var want []string
	if spec.MemoryBytes > 0 {
		want = append(want, "memory")
	}
	if spec.io() {
		want = append(want, "io")
	}
	if err := enable(filepath.Join(root, self), want); err != nil {
		return err
	}
	dir, err := c.mkdir(root, self, name)
	if err != nil {
		return err
	}
	if spec.MemoryBytes > 0 {
		if err := write(dir, "memory.max", strconv.FormatInt(spec.MemoryBytes, 10)); err != nil {
			return err
		}
	}
	if spec.io() {
		line := dev
		for _, l := range []struct {
			key string
			v   int64
		}{{"riops", spec.ReadIOPS}, {"wiops", spec.WriteIOPS}, {"rbps", spec.ReadBPS}, {"wbps", spec.WriteBPS}} {
			if l.v > 0 {
				line += fmt.Sprintf(" %s=%d", l.key, l.v)
			}
		}
		if err := write(dir, "io.max", line); err != nil {
			return err
		}
	}
	if c.fd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("open the cgroup %s: %w", dir, err)
	}
	return nil
}

// record is what the cgroup applies, for results.json.
func (c *Cgroup) record(spec Spec, dev string) {
	c.applied = results.AppliedLimits{Cgroup: c.dirs[0], CgroupVersion: c.version}
	if spec.MemoryBytes > 0 {
		c.applied.MemoryLimitBytes = spec.MemoryBytes
	}
	if !spec.io() {
		return
	}
	c.applied.StorageLimit = map[string]string{"device": dev}
	for k, v := range map[string]int64{"read_iops": spec.ReadIOPS, "write_iops": spec.WriteIOPS, "read_mbps": spec.ReadBPS, "write_mbps": spec.WriteBPS} {
		if v > 0 {
			if strings.HasSuffix(k, "mbps") {
				c.applied.StorageLimit[k] = strconv.FormatFloat(float64(v)/1e6, 'f', -1, 64)
			} else {
				c.applied.StorageLimit[k] = strconv.FormatInt(v, 10)
			}
		}
	}
}

// mkdir creates name under our own cgroup in one hierarchy.
func (c *Cgroup) mkdir(root, own, name string) (string, error) {
	dir := filepath.Join(root, own, name)
	if err := os.Mkdir(dir, 0o755); err != nil { // safefs: a cgroup in cgroupfs, which only root can change
		return "", fmt.Errorf("create the cgroup %s: %w", dir, err)
	}
	c.dirs = append(c.dirs, dir)
	c.procs = append(c.procs, filepath.Join(dir, "cgroup.procs"))
	return dir, nil
}

// enable turns the controllers on for the children of parent (v2). It
// fails when parent holds processes itself (the "no internal processes"
// rule), as it does for a shell's cgroup outside a systemd scope.
func enable(parent string, controllers []string) error {
	have, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("read %s: %w", filepath.Join(parent, "cgroup.subtree_control"), err)
	}
	on := strings.Fields(string(have))
	for _, ctl := range controllers {
		if contains(on, ctl) {
			continue
		}
		if err := write(parent, "cgroup.subtree_control", "+"+ctl); err != nil {
			return fmt.Errorf("enable the %s controller for calibra's cgroup (it must not hold processes itself): %w", ctl, err)
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func write(dir, file, value string) error {
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil { // safefs: a control file of a cgroup calibra made in cgroupfs, which only root can change
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return nil
}

// Applied says what is in force, for results.json.
func (c *Cgroup) Applied() results.AppliedLimits { return c.applied }

// Prepare sets a command about to start so that it starts inside the
// cgroup (v2, clone3 with CLONE_INTO_CGROUP): nothing it forks can escape.
// With v1 Attach must follow the start.
func (c *Cgroup) Prepare(attr *syscall.SysProcAttr) {
	if c == nil || c.fd < 0 {
		return
	}
	attr.UseCgroupFD, attr.CgroupFD = true, c.fd
}

// Attach moves a started process into the cgroup (v1), then the children
// it forked before the move: they would stay outside otherwise. Children
// forked later inherit the cgroup. With v2 (see Prepare) it does nothing.
func (c *Cgroup) Attach(pid int) error {
	if c == nil || c.fd >= 0 {
		return nil
	}
	pids := append([]int{pid}, children(pid)...)
	for _, f := range c.procs {
		for _, p := range pids {
			if err := os.WriteFile(f, []byte(strconv.Itoa(p)), 0o644); err != nil && !errors.Is(err, syscall.ESRCH) { // safefs: cgroup.procs of calibra's own cgroup in cgroupfs, which only root can change
				return fmt.Errorf("move process %d into %s: %w", p, filepath.Dir(f), err)
			}
		}
	}
	return nil
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces; ppid follows it.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// Close removes the cgroups. The processes in them must have exited; the
// page cache they charged passes to the parent.
func (c *Cgroup) Close() error {
	if c == nil {
		return nil
	}
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	var errs []error
	for i := len(c.dirs) - 1; i >= 0; i-- {
		if err := os.Remove(c.dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) { // safefs: calibra's own cgroup in cgroupfs
			errs = append(errs, fmt.Errorf("remove the cgroup %s: %w", c.dirs[i], err))
		}
	}
	c.dirs = nil
	return errors.Join(errs...)
}

// SyncFS writes out the dirty pages of the file systems holding dirs
// (syncfs), and no other's: sync() would also flush every other file
// system on the host, and make durable there what another program (a
// power-loss audit beside this one) had not.
func SyncFS(dirs ...string) error {
	for _, dir := range dirs {
		f, err := os.Open(dir)
		if err != nil {
			return fmt.Errorf("sync the file system of %s: %w", dir, err)
		}
		err = unix.Syncfs(int(f.Fd()))
		f.Close()
		if err != nil {
			return fmt.Errorf("sync the file system of %s: %w", dir, err)
		}
	}
	return nil
}

// mounts are the cgroup hierarchies: v1 by controller, and the v2 root.
type mounts struct {
	v1 map[string]string
	v2 string
}

func (sys system) readMounts() (mounts, error) {
	m := mounts{v1: map[string]string{}}
	f, err := os.Open(sys.mounts)
	if err != nil {
		return m, fmt.Errorf("read the mounts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		switch fields[2] {
		case "cgroup":
			for _, opt := range strings.Split(fields[3], ",") {
				if opt == "memory" || opt == "blkio" {
					m.v1[opt] = fields[1]
				}
			}
		case "cgroup2":
			// The hybrid layout mounts an empty v2 at /sys/fs/cgroup/unified;
			// the last one mounted wins, as the kernel would show it.
			m.v2 = fields[1]
		}
	}
	return m, sc.Err()
}

// readSelf maps each v1 controller (and "" for v2) to calibra's cgroup.
func (sys system) readSelf() (map[string]string, error) {
	data, err := os.ReadFile(sys.self)
	if err != nil {
		return nil, fmt.Errorf("read calibra's cgroup: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out, nil
}

// disk is "major:minor" of the whole disk holding path: the kernel
// throttles disks, not partitions.
func (sys system) disk(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("find the device under %s: %w", path, err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	link, err := filepath.EvalSymlinks(filepath.Join(sys.sysDev, dev))
	if err != nil {
		return "", fmt.Errorf("%s is on %s, which is not a block device (a virtual or network file system cannot be throttled)", path, dev)
	}
	if _, err := os.Stat(filepath.Join(link, "partition")); err == nil {
		parent, err := os.ReadFile(filepath.Join(link, "..", "dev"))
		if err != nil {
			return "", fmt.Errorf("find the disk of the partition %s: %w", dev, err)
		}
		return strings.TrimSpace(string(parent)), nil
	}
	return dev, nil
}
