package secret

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExposed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode os.FileMode
		want bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o604, true}, {0o644, true}, {0o620, false}} {
		path := filepath.Join(dir, c.mode.String())
		if err := os.WriteFile(path, []byte("postgres://u:p@h/db"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		if mode, got := Exposed(path); got != c.want || mode != c.mode {
			t.Errorf("Exposed(%v) = %v, %v; want %v", c.mode, mode, got, c.want)
		}
	}
	if _, got := Exposed(filepath.Join(dir, "missing")); got {
		t.Error("a missing file is exposed")
	}
	if _, got := Exposed(dir); got {
		t.Error("a directory is exposed")
	}
}
