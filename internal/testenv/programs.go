package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Trap is a program, or a directory of programs, standing where another
// account could change it: given to calibra as a program to run, it must
// be refused, and it leaves a mark if it ever runs.
type Trap struct {
	Case   string // how another account holds it, e.g. "owned by nobody"
	Path   string // the program, or the directory (TrapDirs)
	marker string
}

// Ran says whether any program of the trap ran.
func (p Trap) Ran() bool {
	_, err := os.Lstat(p.marker)
	return err == nil
}

// trapScript marks that it ran, then answers --version as the real
// program would, so that only the rule stops calibra going further.
func trapScript(marker, version string) []byte {
	return []byte("#!/bin/sh\ntouch '" + marker + "'\n[ \"$1\" = --version ] && echo '" + version + "'\nexit 0\n")
}

// Traps makes the program name, answering --version with version, in
// each way another account (nobody) could change it: its own, root's in
// its directory, root's in a directory open to all, and root's reached
// through its link. It skips the test without root or nobody.
func Traps(t testing.TB, name, version string) []Trap {
	t.Helper()
	return traps(t, version, name)
}

// TrapDirs is Traps for a directory of programs (--pg-bin): each trap is
// a directory holding every one of names.
func TrapDirs(t testing.TB, version string, names ...string) []Trap {
	t.Helper()
	return traps(t, version, names...)
}

// traps makes the traps; with one name each trap is the program itself,
// with more the directory holding them.
func traps(t testing.TB, version string, names ...string) []Trap {
	t.Helper()
	uid, gid := Stranger(t)
	base := t.TempDir()
	// Root's, sticky and open to all, as /tmp: only the owner of an
	// entry can replace it, so an entry of root's stays root's.
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil { // safefs: in t.TempDir, the test's own
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	chown := func(path string) {
		if err := os.Lchown(path, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	var out []Trap
	add := func(c string, dir string, owner func(string)) string {
		if err := os.MkdirAll(dir, 0o755); err != nil { // safefs: in t.TempDir, the test's own
			t.Fatal(err)
		}
		marker := filepath.Join(base, "ran-"+filepath.Base(dir))
		for _, n := range names {
			p := filepath.Join(dir, n)
			if err := os.WriteFile(p, trapScript(marker, version), 0o755); err != nil { // safefs: in t.TempDir, the test's own
				t.Fatal(err)
			}
			if owner != nil {
				owner(p)
			}
		}
		tr := Trap{Case: c, Path: dir, marker: marker}
		if len(names) == 1 {
			tr.Path = filepath.Join(dir, names[0])
		}
		out = append(out, tr)
		return dir
	}
	add("owned by nobody", filepath.Join(base, "theirs"), chown)
	chown(add("root's, in a directory nobody owns", filepath.Join(base, "their-dir"), nil))
	open := add("root's, in a directory open to all", filepath.Join(base, "open"), nil)
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	// Root's program in root's directory, given through nobody's link in
	// the shared directory (which nobody could point elsewhere).
	mine := add("root's, through a link nobody owns", filepath.Join(base, "mine"), nil)
	link := filepath.Join(shared, "link")
	target := mine
	if len(names) == 1 {
		link, target = filepath.Join(shared, names[0]), filepath.Join(mine, names[0])
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	chown(link)
	out[len(out)-1].Path = link
	return out
}
