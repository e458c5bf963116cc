package testenv

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// initsDirName is the directory, in the system's temporary directory,
// where the tests keep the data directories they copy (copyInit): one per
// initialiser, its arguments and account, kept for later runs as Go's
// build cache is, and one per account that runs the tests (its UID
// follows), which must own it. bench/test-times.sh --fresh removes it, as
// a new machine has none.
var initsDirName = fmt.Sprintf("calibra-test-inits-%d", os.Geteuid())

// initsParent is the temporary directory when the test binary started: a
// test that sets TMPDIR does not move the cache.
var initsParent = os.TempDir()

// Every data directory a test starts on the file system of the system's
// temporary directory is a copy of its initialiser's first run there
// (server.Initialise); one on other storage (a lab, a loop device) is the
// initialiser's own run on it. A run of the suite started 85
// PostgreSQL data directories, each initdb 0.47 CPU-seconds beside the
// other tests (40 of the suite's 664, process accounting, 2026-12-06),
// where a copy of the 39 MB takes 0.05-0.3. The first run of each is the
// real initialiser's, through the same code; the copy differs only in
// what the initialiser makes unique to a run (PostgreSQL's system
// identifier), which no test reads. The engines' own packages start data
// directories the same way.
func init() { server.Initialise = copyInit }

// copyInit copies the cached run of the initialiser into dataDir, as the
// server's account, making the cached run first where there is none. An
// initialiser that writes outside the data directory runs there itself.
func copyInit(ctx context.Context, a server.Account, group *proc.Group, dataDir string, initialiser server.Initialiser) error {
	if initialiser.Outside != "" {
		return initialiser.Run(dataDir)
	}
	top, err := safefs.MkdirOwn(initsParent, initsDirName, 0o755)
	if err != nil {
		return fmt.Errorf("the tests' cache of data directories: %w", err)
	}
	var cache, data unix.Stat_t
	if err := unix.Stat(top, &cache); err != nil {
		return err
	}
	if err := unix.Stat(dataDir, &data); err != nil {
		return err
	}
	if cache.Dev != data.Dev {
		// A lab or a loop device: the storage under test, where the
		// initialiser's own run is what a test may look at (a full one).
		return initialiser.Run(dataDir)
	}
	// Sparse: a MariaDB redo log is zeros its initialiser wrote through
	// (96 MiB to 1 GiB a copy, 7.3 of the 9.7 GB the suite copied). A
	// copy's log is allocated as the instance writes it, which no test
	// times; the initialiser's own run, where a test looks at the log's
	// extents, is on a lab or a WAL path of its own.
	copyDir := func(from, to string) error {
		cp, err := findCp()
		if err != nil {
			return err
		}
		if out, err := a.Run(ctx, group, "cp", cp.Command("-a", "--sparse=always", "--", from+"/.", to)); err != nil {
			return fmt.Errorf("copy the data directory %s into %s: %w: %s", from, to, err, server.LastLines(out, 2, " | "))
		}
		return nil
	}
	entry, err := cachedInit(a, top, initialiser, copyDir)
	if err != nil {
		return err
	}
	return copyDir(entry, dataDir)
}

// findCp finds cp once for the suite's hundred-odd copies.
var findCp = sync.OnceValues(func() (proc.Program, error) {
	return proc.Need("cp", "cp on PATH", errors.New("cp, which copies the tests' cached data directories, is not on PATH"))
})

// cachedInit is the cached run of initialiser as a in top, made by its Run
// where there is none yet and kept as a sparse copy (copyDir), so that
// each copy from it seeks past the zeros rather than reading them. Test
// binaries side by side may both make it: the first rename wins, and the
// other's copy goes.
func cachedInit(a server.Account, top string, initialiser server.Initialiser, copyDir func(from, to string) error) (string, error) {
	key, err := initKey(a, initialiser.Program, initialiser.Args)
	if err != nil {
		return "", err
	}
	entry := filepath.Join(top, key)
	if ok, err := cachedEntry(a, entry); ok || err != nil {
		return entry, err
	}
	made, err := safefs.PrivateTemp(top, key+".new-")
	if err != nil {
		return "", err
	}
	sparse := ""
	err = a.Chown(made)
	if err == nil {
		err = initialiser.Run(made)
	}
	if err == nil {
		sparse, err = safefs.PrivateTemp(top, key+".sparse-")
	}
	if err == nil {
		err = a.Chown(sparse)
	}
	if err == nil {
		err = copyDir(made, sparse)
	}
	if err == nil {
		err = safefs.Rename(top, filepath.Base(sparse), key)
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			err = nil // another test binary's came first
		}
	}
	for _, dir := range []string{made, sparse} {
		if dir == "" {
			continue
		}
		if rmErr := server.RemoveDir(dir); err == nil {
			err = rmErr
		}
	}
	if err != nil {
		return "", err
	}
	_, err = cachedEntry(a, entry)
	return entry, err
}

// cachedEntry reports whether entry is there, refusing one that is not a
// directory of a's that only a can change.
func cachedEntry(a server.Account, entry string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Lstat(entry, &st); errors.Is(err, unix.ENOENT) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	owner := a.UID
	if owner < 0 {
		owner = os.Geteuid()
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != owner || st.Mode&0o077 != 0 {
		return false, fmt.Errorf("%s is not a private directory of the server's account: remove %s", entry, filepath.Dir(entry))
	}
	return true, nil
}

// initKey names a run: the program (its path, size and time, so that an
// upgrade makes its data directories anew), its arguments and the account.
func initKey(a server.Account, program string, args []string) (string, error) {
	st, err := os.Stat(program)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00%s", program, st.Size(), st.ModTime().UnixNano(), a.UID, strings.Join(args, "\x00"))
	return fmt.Sprintf("%x", h.Sum(nil))[:24], nil
}
