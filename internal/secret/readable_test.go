package secret

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The sweep finds a secret in a file another account can read, and not
// in a 0600 file or behind a directory no other account can enter.
func TestReadableFindsOnlyExposedSecrets(t *testing.T) {
	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(rel string, mode os.FileMode, text string) {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("logs/server.log", 0o644, "wsrep_cluster_name=calibra-0123456789abcdef0123")
	write("logs/private.log", 0o600, "wsrep_cluster_name=calibra-0123456789abcdef0123")
	write("raw/key.pem", 0o644, "-----BEGIN PRIVATE KEY-----\n")
	write("closed/inside.log", 0o644, "calibra-0123456789abcdef0123")
	if err := os.Chmod(filepath.Join(root, "closed"), 0o700); err != nil {
		t.Fatal(err)
	}
	found, err := Readable(root, "calibra-0123456789abcdef0123", KeyMaterial)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, "logs/server.log") + " holds calibra-0123456789abcdef0123",
		filepath.Join(root, "raw/key.pem") + " holds " + KeyMaterial,
	}
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Errorf("found %q, want %q", found, want)
	}
}
