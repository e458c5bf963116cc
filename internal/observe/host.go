// Package observe reads what the host and the storage under test are, and
// samples them while a step runs: the OS from /proc each second, the
// database through its engine's dialect (observepg for PostgreSQL):
// its statistics and its sessions' wait events.
package observe

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/results"
)

// Host describes this machine.
func Host() results.Host {
	h := results.Host{CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MemBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return h
}

// Storage finds the file system and device that hold path, from the mount
// table: the mount with the longest mount point that prefixes path.
func Storage(path string) results.Storage {
	abs := absPath(path)
	s := results.Storage{Path: abs}
	if m, err := mountOf("/proc", abs); err == nil {
		s.FS, s.Device = m.fstype, m.source
	}
	return s
}

// mount is one line of /proc/self/mountinfo.
type mount struct {
	point, fstype, source string
	majMin                string // the st_dev of files on it, "8:1"
}

// mountOf returns the mount that holds the absolute path abs.
func mountOf(proc, abs string) (mount, error) {
	f, err := os.Open(filepath.Join(proc, "self", "mountinfo"))
	if err != nil {
		return mount{}, fmt.Errorf("read the mount table: %w", err)
	}
	defer f.Close()
	var best mount
	found := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		mp := unescapeMount(fields[4])
		if !within(abs, mp) || (found && len(mp) < len(best.point)) {
			continue
		}
		// A later mount on the same point hides the earlier one.
		best = mount{point: mp, fstype: fields[sep+1], source: unescapeMount(fields[sep+2]), majMin: fields[2]}
		found = true
	}
	if err := sc.Err(); err != nil {
		return mount{}, fmt.Errorf("read the mount table: %w", err)
	}
	if !found {
		return mount{}, fmt.Errorf("no mount holds %s", abs)
	}
	return best, nil
}

// absPath makes path absolute and resolves its symbolic links where it
// exists, so that the mount table matches it.
func absPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs
}

func within(path, mount string) bool {
	if mount == "/" {
		return true
	}
	return path == mount || strings.HasPrefix(path, mount+"/")
}

// unescapeMount undoes the octal escapes of mountinfo (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
