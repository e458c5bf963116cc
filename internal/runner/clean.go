package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/pathlock"
)

// Clean removes the managed instance under path, stopping its server first
// if a crashed calibra left one running, the storage lab and device test
// files a killed run left there, and what dead runs left anywhere (socket
// directories, empty cgroups); it says what it did on w.
func Clean(path string, w io.Writer) error {
	if err := CheckPath(path, 0, "clean"); err != nil {
		return err
	}
	// The socket directories' base is judged before anything is removed:
	// one another account made or can write to is refused, not cleaned.
	if _, err := server.SocketBase(false); err != nil {
		return err
	}
	// A running command's instance is not clean's to remove.
	lock, err := pathlock.Acquire(path, "clean")
	var held *pathlock.HeldError
	if errors.As(err, &held) {
		return fault.Input("wait for it to finish, or stop it first (Ctrl-C)", "%v", err)
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := refuseLinks(path); err != nil {
		return err
	}
	removed, err := removeInstances(path)
	if err != nil {
		return fmt.Errorf("remove the managed instance: %w", err)
	}
	for _, name := range removed {
		fmt.Fprintf(w, "removed the managed %s under %s\n", name, path)
	}
	if len(removed) == 0 {
		fmt.Fprintf(w, "no managed instance under %s\n", path)
	}
	// A lab a killed run left up, and its platter (the instance on it too).
	if had, err := lab.Cleanup(path, func(fs string) error { _, err := removeInstances(fs); return err }); err != nil {
		return fmt.Errorf("remove the storage lab: %w", err)
	} else if had {
		fmt.Fprintf(w, "removed the storage lab under %s\n", path)
	}
	// Test files a crashed device run left behind.
	if err := device.Cleanup([]device.Target{{Kind: device.KindDir, Path: path}}); err != nil {
		return fmt.Errorf("remove device test files: %w", err)
	}
	// What killed runs leave outside any path: socket directories
	// and empty cgroups. A live run's are never touched.
	var socks []string
	var serr error
	for _, d := range engine.Descriptors() {
		if d.RemoveStaleSockets != nil {
			more, err := d.RemoveStaleSockets()
			socks, serr = append(socks, more...), errors.Join(serr, err)
		}
	}
	cgroups, cerr := limits.RemoveStale()
	if n := len(socks) + len(cgroups); n > 0 {
		fmt.Fprintf(w, "removed %d socket directories and %d empty cgroups that dead runs left\n", len(socks), len(cgroups))
	}
	if err := errors.Join(serr, cerr); err != nil {
		fmt.Fprintf(w, "warning: not everything dead runs left could be removed: %v\n", err)
	}
	return nil
}

// removeInstances removes every engine's managed instance under path, and
// those of --instances under path/calibra-instances, naming each it found.
func removeInstances(path string) ([]string, error) {
	found, err := removeEngines(path, "")
	if err != nil {
		return found, err
	}
	dirs, _ := filepath.Glob(filepath.Join(path, InstancesDir, "*"))
	for _, dir := range dirs {
		more, err := removeEngines(dir, " "+filepath.Base(dir)+" of --instances")
		found = append(found, more...)
		if err != nil {
			return found, err
		}
		if err := os.Remove(dir); err != nil {
			return found, err
		}
	}
	if len(dirs) > 0 {
		return found, os.Remove(filepath.Join(path, InstancesDir))
	}
	return found, nil
}

// removeEngines removes each engine's managed instance in path, naming
// each it found as a sentence does, with suffix after the name.
func removeEngines(path, suffix string) ([]string, error) {
	var found []string
	for _, m := range managed() {
		removed, err := m.Remove(path)
		if err != nil {
			return found, err
		}
		if removed {
			found = append(found, m.Title+" instance"+suffix)
		}
	}
	return found, nil
}

// managed is every engine's kinds of managed instance.
func managed() []engine.Managed {
	var all []engine.Managed
	for _, d := range engine.Descriptors() {
		all = append(all, d.Managed...)
	}
	return all
}

// instancePatterns are the names of every managed instance's
// directories.
func instancePatterns() []string {
	var patterns []string
	for _, m := range managed() {
		patterns = append(patterns, m.Pattern)
	}
	return patterns
}

// refuseLinks refuses, before anything is removed, a symbolic link at any
// name clean removes under path (the managed instances, calibra-instances
// and its members, the device test directory, the lab): where others can
// write to path, such a link would have clean stop, empty or remove what
// it points at, out of path. calibra makes none of these as links.
func refuseLinks(path string) error {
	var names []string
	for _, pattern := range append(instancePatterns(), InstancesDir, device.TestDir, lab.DirName) {
		m, _ := filepath.Glob(filepath.Join(path, pattern))
		names = append(names, m...)
	}
	members, _ := filepath.Glob(filepath.Join(path, InstancesDir, "*"))
	for _, member := range members {
		names = append(names, member)
		for _, pattern := range instancePatterns() {
			m, _ := filepath.Glob(filepath.Join(member, pattern))
			names = append(names, m...)
		}
	}
	for _, name := range names {
		if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return fault.Input(fmt.Sprintf("remove the link yourself (another account may have made it) and make %s writable only by the accounts you trust", path),
				"%s is a symbolic link, and clean follows no link out of %s", name, path)
		}
	}
	return nil
}
