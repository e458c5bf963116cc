package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/server"
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

// LongSocketPaths starts a managed server (start, on a --path of 200
// bytes, returning its socket directory) under a TMPDIR as long as still
// holds calibra's sockets, which must hold this one's, and under one of
// 120 bytes, which must not (a server's socket there would pass 107):
// each server must start, as a user's with TMPDIR and --path deep in
// their tree does. The test cannot be parallel.
func LongSocketPaths(t *testing.T, start func(t *testing.T, path string) (socketDir string)) {
	for _, n := range []int{server.SocketParentMax(), 120} {
		t.Run(fmt.Sprintf("TMPDIR of %d bytes", n), func(t *testing.T) {
			tmp := LongPath(t, n)
			t.Setenv("TMPDIR", tmp)
			sock := start(t, LongPath(t, 200))
			if under := strings.HasPrefix(sock, tmp+"/"); under != (n <= server.SocketParentMax()) {
				t.Errorf("the socket directory %s of a TMPDIR of %d bytes (at most %d hold sockets)", sock, n, server.SocketParentMax())
			}
		})
	}
}
