package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// nobody is the other account of these tests.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another account")
	}
}

func isInput(err error) bool {
	var in *fault.InputError
	return errors.As(err, &in)
}

// mkdir makes dir with mode (exactly, past the umask) and owner uid.
func mkdir(t *testing.T, dir string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckDir(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	mine := mkdir(t, filepath.Join(base, "mine"), 0o755, 0)
	mkdir(t, filepath.Join(mine, "sub"), 0o755, 0)
	theirs := mkdir(t, filepath.Join(base, "theirs"), 0o755, nobody)
	open := mkdir(t, filepath.Join(base, "open"), 0o777, 0)
	sticky := mkdir(t, filepath.Join(base, "sticky"), 0o777|os.ModeSticky, 0)
	inSticky := mkdir(t, filepath.Join(sticky, "mine"), 0o755, 0)
	theirsInSticky := mkdir(t, filepath.Join(sticky, "theirs"), 0o755, nobody)
	belowTheirs := mkdir(t, filepath.Join(theirs, "mine"), 0o755, 0)
	link := filepath.Join(base, "link")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	// Another account's link to root's directory, in a sticky place: it
	// could point the link elsewhere after the check.
	theirLink := filepath.Join(sticky, "their-link")
	if err := os.Symlink(mine, theirLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(theirLink, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir                 string
		wantDir, wantParent bool // whether CheckDir, CheckParent pass
	}{
		{mine, true, true},
		{link, true, true}, // resolved, then checked: the link is root's
		{theirLink, false, false},
		{filepath.Join(theirLink, "sub"), false, false},
		{theirs, false, false},
		{open, false, false},
		{sticky, false, true},
		{inSticky, true, true},
		{theirsInSticky, false, false},
		{belowTheirs, false, false},
		{filepath.Join(base, "missing"), false, false},
	} {
		for _, f := range []struct {
			name  string
			check func(string, string) error
			want  bool
		}{{"CheckDir", CheckDir, c.wantDir}, {"CheckParent", CheckParent, c.wantParent}} {
			err := f.check(c.dir, "")
			if (err == nil) != f.want {
				t.Errorf("%s(%s) = %v, want pass %v", f.name, strings.TrimPrefix(c.dir, base), err, f.want)
			}
			if err != nil && !isInput(err) {
				t.Errorf("%s(%s) = %v, not an input error (exit 2)", f.name, c.dir, err)
			}
		}
	}
}

func TestMkdirOwnRefusesWhatAnotherAccountMadeFirst(t *testing.T) {
	needRoot(t)
	sticky := mkdir(t, filepath.Join(t.TempDir(), "shared"), 0o777|os.ModeSticky, 0)
	canary := filepath.Join(t.TempDir(), "canary")
	if err := os.WriteFile(canary, []byte("root's"), 0o600); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(sticky, "planted"), 0o755, nobody)
	if err := os.Symlink(t.TempDir(), filepath.Join(sticky, "link")); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(sticky, "open"), 0o777, 0)
	for _, name := range []string{"planted", "link", "open"} {
		if _, err := MkdirOwn(sticky, name, 0o700); err == nil || !isInput(err) {
			t.Errorf("MkdirOwn over %s = %v, want an input error", name, err)
		}
	}
	dir, err := MkdirOwn(sticky, "fresh", 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(dir); err != nil || st.Mode().Perm() != 0o755 || !st.IsDir() {
		t.Errorf("fresh directory: %v %v", st.Mode(), err)
	}
	if _, err := MkdirOwn(sticky, "fresh", 0o755); err != nil {
		t.Errorf("MkdirOwn of calibra's own existing directory: %v", err)
	}
	if _, err := MkdirAllOwn(filepath.Join(sticky, "planted", "a", "b"), 0o755); err == nil {
		t.Error("MkdirAllOwn below another account's directory passed")
	}
	tmp, err := PrivateTemp(sticky, "cache-")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(tmp); st.Mode().Perm() != 0o700 || Own(tmp) != nil {
		t.Errorf("PrivateTemp made %v, Own: %v", st.Mode(), Own(tmp))
	}
}

func TestRemoveAllStaysBeneath(t *testing.T) {
	outside := t.TempDir()
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	tree := filepath.Join(parent, "tree", "sub")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tree, "out")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveAll(parent, "tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(parent, "tree")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tree left: %v", err)
	}
	if data, err := os.ReadFile(canary); err != nil || string(data) != "keep" {
		t.Errorf("canary %q, %v", data, err)
	}
	if err := RemoveAll(parent, "../"+filepath.Base(outside)); err == nil {
		t.Error("RemoveAll left its parent")
	}
}
