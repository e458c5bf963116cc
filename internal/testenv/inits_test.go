package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/proc"
)

// A data directory on the cache's file system is a copy of the
// initialiser's first run with the same program and arguments, which runs
// once; other arguments run it again; a data directory on other storage
// (/dev/shm), or one whose initialiser writes outside it, is the
// initialiser's own run there; a cache entry another account could change
// is refused. The zeros an initialiser wrote (MariaDB's redo log) are
// holes in the cache and in each copy.
func TestDataDirectoriesAreCopiesOfOneRunPerArguments(t *testing.T) {
	parent := initsParent
	initsParent = t.TempDir()
	t.Cleanup(func() { initsParent = parent })
	ctx, self := context.Background(), server.Account{UID: -1, GID: -1}
	program, runs := os.Args[0], 0
	run := func(dir string) error {
		runs++
		if err := os.WriteFile(filepath.Join(dir, "zeros"), make([]byte, 1<<20), 0o600); err != nil { // safefs: the directory the test's initialiser was given
			return err
		}
		return os.WriteFile(filepath.Join(dir, "made-in"), []byte(dir), 0o600) // safefs: the directory the test's initialiser was given
	}
	// allocated is the bytes the file system holds for a data directory's zeros.
	allocated := func(dir string) int64 {
		t.Helper()
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(dir, "zeros"), &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	// initialise makes a data directory in storage with args and says
	// where the initialiser ran for it.
	initialise := func(storage, outside string, args ...string) string {
		t.Helper()
		dataDir, err := os.MkdirTemp(storage, "data")
		if err != nil {
			t.Fatal(err)
		}
		if err := copyInit(ctx, self, proc.NewGroup(), dataDir, server.Initialiser{Program: program, Args: args, Outside: outside, Run: run}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dataDir, "made-in"))
		if err != nil {
			t.Fatal(err)
		}
		if copied := strings.HasPrefix(string(b), filepath.Join(initsParent, initsDirName)); copied && allocated(dataDir) != 0 {
			t.Errorf("a copy holds %d bytes for the initialiser's 1 MiB of zeros, want none", allocated(dataDir))
		}
		return string(b)
	}

	first := initialise(t.TempDir(), "", "--a")
	if again := initialise(t.TempDir(), "", "--a"); runs != 1 || again != first || !strings.HasPrefix(first, filepath.Join(initsParent, initsDirName)) {
		t.Errorf("two data directories with the same arguments: %d runs, made in %s and %s; want one run, in the cache", runs, first, again)
	}
	if entries, _ := filepath.Glob(filepath.Join(initsParent, initsDirName, "*")); len(entries) != 1 || allocated(entries[0]) != 0 {
		t.Errorf("the cache holds %v, its zeros not holes: want one entry, sparse", entries)
	}
	if other := initialise(t.TempDir(), "", "--b"); runs != 2 || other == first {
		t.Errorf("other arguments: %d runs, made in %s; want a second run", runs, other)
	}
	own := t.TempDir()
	if at := initialise(own, t.TempDir(), "--a"); runs != 3 || !strings.HasPrefix(at, own) {
		t.Errorf("an initialiser that writes outside the data directory: %d runs, made in %s; want its own run there", runs, at)
	}

	var tmp, shm unix.Stat_t
	if unix.Stat(initsParent, &tmp) != nil || unix.Stat("/dev/shm", &shm) != nil || tmp.Dev == shm.Dev {
		t.Skip("no /dev/shm on a file system of its own here")
	}
	elsewhere, err := os.MkdirTemp("/dev/shm", "calibra-inits-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(elsewhere) // safefs: the test's own MkdirTemp
	if at := initialise(elsewhere, "", "--a"); runs != 4 || !strings.HasPrefix(at, elsewhere) {
		t.Errorf("a data directory on other storage: %d runs, made in %s; want the initialiser's own run there", runs, at)
	}

	key, err := initKey(self, program, []string{"--c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(initsParent, initsDirName, key), 0o777); err != nil { // safefs: the test's own t.TempDir
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(initsParent, initsDirName, key), 0o777); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	if err := copyInit(ctx, self, proc.NewGroup(), dataDir, server.Initialiser{Program: program, Args: []string{"--c"}, Run: run}); err == nil || !strings.Contains(err.Error(), "not a private directory") {
		t.Errorf("a cache entry others can write was taken: %v", err)
	}
}
