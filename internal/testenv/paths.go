package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LongPath is a new storage directory (StorageDir) whose path is exactly n
// bytes, as a --path deep in a user's tree: what calibra places beneath it
// (sockets above all, at most 107 bytes) must not grow with it.
func LongPath(t testing.TB, n int) string {
	t.Helper()
	dir := StorageDir(t)
	if len(dir)+2 > n {
		t.Fatalf("%s is already longer than %d bytes", dir, n)
	}
	path := filepath.Join(dir, strings.Repeat("d", n-len(dir)-1))
	if err := os.Mkdir(path, 0o755); err != nil { // safefs: in the test's own storage directory
		t.Fatal(err)
	}
	return path
}
