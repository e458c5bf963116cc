package cli

import (
	"fmt"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// requireLabStack skips a test where a stack cannot be built here (no
// root, FUSE, loop devices or nbdkit), unless CALIBRA_TEST_REQUIRE names
// lab; the test plays another account too, so it needs that account.
func requireLabStack(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a storage lab; run without -short")
	}
	parts, _ := lab.Parse("hdd+flash-cache")
	if err := lab.Check(parts); err != nil {
		if testenv.Required("lab") {
			t.Fatalf("the storage lab is required here (CALIBRA_TEST_REQUIRE names lab): %v", err)
		}
		t.Skipf("the storage lab cannot be built here: %v", err)
	}
	testenv.Stranger(t)
}

// strangers makes each path (not followed) the account nobody's.
func strangers(t *testing.T, paths ...string) {
	t.Helper()
	uid, gid := testenv.Stranger(t)
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLabCheckIgnoresAPlantedCache: another account makes, first, the
// directory in /dev/shm where calibra used to keep the flash cache
// (calibra-lab-cache-<FNV-64a of PATH/calibra-lab>), with cache and
// journal linked to a root 0600 file. calibra used to open both through
// the links and truncate the file to the cache's size; now the cache is a
// private directory of a random name, and the file and the planted
// directory are left as they were.
func TestLabCheckIgnoresAPlantedCache(t *testing.T) {
	t.Parallel()
	requireLabStack(t)
	dir := clitest.StorageDir(t)
	canary, intact := testenv.Canary(t)
	h := fnv.New64a()
	h.Write([]byte(filepath.Join(dir, lab.DirName)))
	planted := filepath.Join("/dev/shm", fmt.Sprintf("calibra-lab-cache-%x", h.Sum64()))
	if err := os.Mkdir(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(planted) })
	links := []string{filepath.Join(planted, "cache"), filepath.Join(planted, "journal"), filepath.Join(planted, "journal.new")}
	for _, l := range links {
		if err := os.Symlink(canary, l); err != nil {
			t.Fatal(err)
		}
	}
	strangers(t, append(links, planted)...)
	defer clitest.Run(t, "clean", "--path", dir)

	for _, spec := range []string{"hdd+flash-cache:size=256M,cache_size=64M", "hdd+nv-cache:size=256M,cache_size=64M"} {
		code, out, stderr := clitest.Run(t, "lab", "check", "--lab", spec, "--path", dir)
		if code != 0 {
			t.Fatalf("lab check --lab %s: exit %d: %s%s", spec, code, out, stderr)
		}
		intact()
		clitest.NoLabLeft(t, dir)
		for _, l := range links {
			if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the planted link %s was replaced or removed: %v", l, err)
			}
		}
		// A clean stop destaged the cache and removed it: nothing is
		// recorded that another account could take next.
		if _, err := os.Lstat(filepath.Join(dir, lab.DirName, "flash-cache-dir")); !os.IsNotExist(err) {
			t.Fatalf("a clean stop left the cache's record: %v", err)
		}
	}
	if code, _, stderr := clitest.Run(t, "clean", "--path", dir); code != 0 {
		t.Fatalf("clean: exit %d: %s", code, stderr)
	}
	if _, err := os.Lstat(planted); err != nil {
		t.Fatalf("clean removed another account's %s by its name: %v", planted, err)
	}
	intact()
}

// TestLabCheckRefusesALabNotItsOwn: a calibra-lab that is a link, or
// another account's with links at fs, fuse and flash-cache-dir, would have
// had root mount ext4 and FUSE over a root 0700 directory outside --path
// and write through the record. lab check and clean refuse it in one
// sentence (exit 2), with nothing made or mounted.
func TestLabCheckRefusesALabNotItsOwn(t *testing.T) {
	t.Parallel()
	requireLabStack(t)
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, root, canaryDir, canary string)
	}{
		{"a link", func(t *testing.T, root, canaryDir, _ string) {
			if err := os.Symlink(canaryDir, root); err != nil {
				t.Fatal(err)
			}
		}},
		{"another account's, with links", func(t *testing.T, root, canaryDir, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			var planted []string
			for name, target := range map[string]string{"fs": canaryDir, "fuse": canaryDir, "flash-cache-dir": canary} {
				l := filepath.Join(root, name)
				if err := os.Symlink(target, l); err != nil {
					t.Fatal(err)
				}
				planted = append(planted, l)
			}
			strangers(t, append(planted, root)...)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := clitest.StorageDir(t)
			canaryDir := filepath.Join(t.TempDir(), "private")
			if err := os.Mkdir(canaryDir, 0o700); err != nil {
				t.Fatal(err)
			}
			canary, intact := testenv.Canary(t)
			c.plant(t, filepath.Join(dir, lab.DirName), canaryDir, canary)
			for _, args := range [][]string{
				{"lab", "check", "--lab", "hdd+flash-cache:size=256M,cache_size=64M", "--path", dir},
				{"clean", "--path", dir},
			} {
				code, out, stderr := clitest.Run(t, args...)
				// clean reports on stderr what it did before the error.
				if code != fault.ExitInput || strings.Count(stderr, "calibra: ") != 1 {
					t.Fatalf("%s: exit %d (want %d in one line): %s%q", args[0], code, fault.ExitInput, out, stderr)
				}
				if entries, err := os.ReadDir(canaryDir); err != nil || len(entries) > 0 {
					t.Fatalf("%s wrote into the root 0700 directory outside --path: %d entries (%v)", args[0], len(entries), err)
				}
				if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), canaryDir) {
					t.Fatalf("%s mounted over the root 0700 directory outside --path", args[0])
				}
				intact()
				clitest.NoLabLeft(t, dir)
			}
		})
	}
}
