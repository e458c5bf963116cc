package observe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// blockDevice names the block device whose /proc/diskstats counters show
// the I/O to path: the device of path's mount, or its whole disk when that
// is a partition (a partition's ticks and queue are the disk's business,
// and iostat reads disks). Device-mapper and md devices are measured as
// themselves: they are what the file system submits to. The mount is
// matched by its major:minor, then by its source name (btrfs and others
// give files an anonymous device number).
func blockDevice(proc, sys, path string) (string, error) {
	m, err := mountOf(proc, path)
	if err != nil {
		return "", err
	}
	if name, ok := findDisk(sys, func(dev, _ string) bool { return dev == m.majMin }); ok {
		return name, nil
	}
	if strings.HasPrefix(m.source, "/dev/") {
		src := m.source
		// /dev/mapper/vg-lv and /dev/disk/by-uuid/... are links to /dev/dm-N, /dev/sdX.
		if real, err := filepath.EvalSymlinks(src); err == nil {
			src = real
		}
		want := filepath.Base(src)
		if name, ok := findDisk(sys, func(_, node string) bool { return node == want }); ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s is on %s (%s, device %s), which is not a block device in %s/block",
		path, m.point, m.fstype, m.source, sys)
}

// findDisk walks sys/block (whole disks only) and their partitions, and
// returns the disk of the first node that matches by its "dev" number or
// its name.
func findDisk(sys string, match func(dev, name string) bool) (string, bool) {
	disks, err := os.ReadDir(filepath.Join(sys, "block"))
	if err != nil {
		return "", false
	}
	for _, d := range disks {
		dir := filepath.Join(sys, "block", d.Name())
		if match(readTrim(filepath.Join(dir, "dev")), d.Name()) {
			return d.Name(), true
		}
		parts, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, p := range parts {
			pdir := filepath.Join(dir, p.Name())
			if _, err := os.Stat(filepath.Join(pdir, "partition")); err != nil {
				continue
			}
			if match(readTrim(filepath.Join(pdir, "dev")), p.Name()) {
				return d.Name(), true
			}
		}
	}
	return "", false
}

func readTrim(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
