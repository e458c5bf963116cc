package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Remove unlinks a file inside its parent and nothing outside it, and says
// when the name is not there.
func TestRemoveStaysInsideItsParent(t *testing.T) {
	parent, outside := parentBesideAFile(t)
	if err := os.WriteFile(filepath.Join(parent, "record"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Remove(parent, "record"); err != nil {
		t.Fatalf("Remove(record): %v", err)
	}
	if err := Remove(parent, "record"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Remove of a name no longer there: %v, want ErrNotExist", err)
	}
	for _, name := range []string{"../outside", "link/outside"} {
		if err := Remove(parent, name); err == nil {
			t.Errorf("Remove(%s) removed a file outside its parent", name)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the file outside the parent is gone: %v", err)
	}
}

// Rename renames inside its parent, and neither takes nor puts a file
// outside it through ".." or a link.
func TestRenameStaysInsideItsParent(t *testing.T) {
	parent, outside := parentBesideAFile(t)
	if err := os.Mkdir(filepath.Join(parent, "new"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Rename(parent, "new", "made"); err != nil {
		t.Fatalf("Rename(new, made): %v", err)
	}
	if fi, err := os.Stat(filepath.Join(parent, "made")); err != nil || !fi.IsDir() {
		t.Errorf("made after the rename: %v, %v", fi, err)
	}
	for _, c := range [][2]string{{"../outside", "taken"}, {"link/outside", "taken"}, {"made", "../put"}, {"made", "link/put"}} {
		if err := Rename(parent, c[0], c[1]); err == nil {
			t.Errorf("Rename(%s, %s) crossed its parent", c[0], c[1])
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the file outside the parent is gone: %v", err)
	}
}

// parentBesideAFile makes a directory, a file beside it (outside) and, in
// the directory, a link ("link") to their common parent.
func parentBesideAFile(t *testing.T) (parent, outside string) {
	t.Helper()
	top := t.TempDir()
	parent, outside = filepath.Join(top, "own"), filepath.Join(top, "outside")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(top, filepath.Join(parent, "link")); err != nil {
		t.Fatal(err)
	}
	return parent, outside
}
