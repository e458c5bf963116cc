// Package observe reads what the host and the storage under test are, and
// (later) samples them while a step runs.
package observe

import (
	"bufio"
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
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	s := results.Storage{Path: abs}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return s
	}
	defer f.Close()
	best := -1
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
		if !within(abs, mp) || len(mp) <= best {
			continue
		}
		best = len(mp)
		s.FS = fields[sep+1]
		s.Device = fields[sep+2]
	}
	return s
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
