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
	top := t.TempDir()
	parent := filepath.Join(top, "own")
	outside := filepath.Join(top, "outside")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, "record"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(top, filepath.Join(parent, "link")); err != nil {
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
