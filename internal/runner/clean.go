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
	"github.com/calibra-bench/calibra/internal/safefs"
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
// calibra-instances and its members are removed by handle, relative to
// path opened once, and only when each is calibra's own (safefs.Own).
func removeInstances(path string) ([]string, error) {
	found, err := removeEngines(path, "")
	if err != nil {
		return found, err
	}
	members, err := instanceMembers(path)
	if err != nil || len(members) == 0 {
		return found, err
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return found, err
	}
	defer root.Close()
	for _, k := range members {
		more, err := removeEngines(filepath.Join(path, InstancesDir, k), " "+k+" of --instances")
		found = append(found, more...)
		if err != nil {
			return found, err
		}
		if err := root.Remove(filepath.Join(InstancesDir, k)); err != nil {
			return found, err
		}
	}
	return found, root.Remove(InstancesDir)
}

// instanceMembers names the members of path/calibra-instances (none when
// it does not exist), refusing it or a member that is not calibra's own:
// a real directory of calibra's account that no other account can write.
func instanceMembers(path string) ([]string, error) {
	dir := filepath.Join(path, InstancesDir)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err := safefs.Own(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if err := safefs.Own(filepath.Join(dir, e.Name())); err != nil {
			return nil, err
		}
		names = append(names, e.Name())
	}
	return names, nil
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
	// What clean removes by handle must be calibra's own as well: one
	// another account made is refused before anything is removed.
	if _, err := instanceMembers(path); err != nil {
		return err
	}
	if dev := filepath.Join(path, device.TestDir); exists(dev) {
		if err := safefs.Own(dev); err != nil {
			return err
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
