package lab

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestMain: the stack runs calibra (os.Executable) as its NBD server; here
// that is this test binary, which must not run the tests again.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "lab" && os.Args[2] == "serve" {
		fmt.Fprintln(os.Stderr, "the lab package's test binary serves no lab")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// canaryDir is a root 0700 directory outside every path the lab uses.
func canaryDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "canary-dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func canaryDirIntact(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > 0 {
		t.Fatalf("the canary directory %s was written into: %d entries (%v)", dir, len(entries), err)
	}
	if m := mountsUnder(dir); len(m) > 0 {
		t.Fatalf("mounted over the canary directory: %v", m)
	}
}

// giveAway makes path (not followed) another account's, as if that
// account had made it.
func giveAway(t *testing.T, path string) {
	t.Helper()
	uid, gid := testenv.Stranger(t)
	if err := os.Lchown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}

// plantCache makes dir another account's directory holding cache and
// journal linked to canary: what that account plants where it expects
// calibra's cache.
func plantCache(t *testing.T, dir, canary string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cache", "journal", "journal.new"} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(canary, link); err != nil {
			t.Fatal(err)
		}
		giveAway(t, link)
	}
	giveAway(t, dir)
}

func wantInputError(t *testing.T, err error, what string) {
	t.Helper()
	var in *fault.InputError
	if !errors.As(err, &in) || fault.Code(err) != fault.ExitInput {
		t.Fatalf("%s: %v (%T), want an input error (exit 2)", what, err, err)
	}
	if strings.Contains(in.Msg, "\n") {
		t.Fatalf("%s: the error is more than one sentence: %q", what, in.Msg)
	}
}

// TestTierRefusesAPlantedCacheDir: the lab's server never uses a cache
// directory another account made, nor follows a link at cache or journal
// even in its own directory: the file the links name keeps what it held
// (the old server truncated it to the cache's size).
func TestTierRefusesAPlantedCacheDir(t *testing.T) {
	canary, intact := testenv.Canary(t)
	dir := t.TempDir()
	platter := filepath.Join(dir, "platter")
	if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("another account's directory", func(t *testing.T) {
		planted := filepath.Join(dir, "planted")
		plantCache(t, planted, canary)
		for _, volatile := range []bool{false, true} {
			tier, err := OpenTier(TierConfig{Platter: platter, CacheDir: planted, CacheBytes: 1 << 20, Volatile: volatile})
			if err == nil {
				tier.Close()
				t.Fatalf("volatile %t: the tier used a cache directory another account made", volatile)
			}
			intact()
		}
	})
	t.Run("links in calibra's own directory", func(t *testing.T) {
		own := filepath.Join(dir, "own")
		if err := os.Mkdir(own, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"cache", "journal"} {
			if err := os.Symlink(canary, filepath.Join(own, name)); err != nil {
				t.Fatal(err)
			}
		}
		for _, volatile := range []bool{false, true} {
			tier, err := OpenTier(TierConfig{Platter: platter, CacheDir: own, CacheBytes: 1 << 20, Volatile: volatile})
			if err == nil {
				tier.Close()
				t.Fatalf("volatile %t: the tier opened its cache through a link", volatile)
			}
			intact()
		}
	})
}

// requireStack skips a test where a stack cannot be built here.
func requireStack(t *testing.T, p Parts) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a storage lab; run without -short")
	}
	if err := Check(p); err != nil {
		if testenv.Required("lab") {
			t.Fatalf("the storage lab is required here (CALIBRA_TEST_REQUIRE names lab): %v", err)
		}
		t.Skipf("the storage lab cannot be built here: %v", err)
	}
	testenv.Stranger(t)
}

// TestUpRefusesALabDirectoryNotItsOwn: another account's calibra-lab, or
// links at calibra-lab, fs or fuse, would have root make the platter and
// mount the lab's file system and FUSE outside --path. Up refuses each
// in one sentence (exit 2), before anything is made or mounted.
func TestUpRefusesALabDirectoryNotItsOwn(t *testing.T) {
	// nbdkit serves this stack, so the old code would have got as far
	// as the mounts.
	parts, err := Parse("plain:size=256M,rate=100G")
	if err != nil {
		t.Fatal(err)
	}
	requireStack(t, parts)
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, root, canary string)
	}{
		{"calibra-lab a link", func(t *testing.T, root, canary string) {
			if err := os.Symlink(canary, root); err != nil {
				t.Fatal(err)
			}
		}},
		{"calibra-lab another account's", func(t *testing.T, root, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			giveAway(t, root)
		}},
		{"calibra-lab writable by others", func(t *testing.T, root, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"fs a link", func(t *testing.T, root, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(canary, filepath.Join(root, "fs")); err != nil {
				t.Fatal(err)
			}
		}},
		{"fuse a link", func(t *testing.T, root, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(canary, filepath.Join(root, "fuse")); err != nil {
				t.Fatal(err)
			}
		}},
		{"fs another account's", func(t *testing.T, root, canary string) {
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			fs := filepath.Join(root, "fs")
			if err := os.Mkdir(fs, 0o755); err != nil {
				t.Fatal(err)
			}
			giveAway(t, fs)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testenv.StorageDir(t)
			canary := canaryDir(t)
			root := filepath.Join(path, DirName)
			c.plant(t, root, canary)
			t.Cleanup(func() {
				if left := Leftovers(path); len(left) > 0 {
					Cleanup(path, nil) // best effort; the test already failed
				}
			})
			stack, err := Up(context.Background(), path, parts, proc.NewGroup())
			if err == nil {
				stack.Down()
				t.Fatalf("the lab came up on %s", c.name)
			}
			wantInputError(t, err, "Up")
			canaryDirIntact(t, canary)
			if left := Leftovers(path); len(left) > 0 {
				t.Fatalf("left: %v", left)
			}
			if _, err := os.Lstat(filepath.Join(root, "platter.img")); err == nil {
				t.Fatalf("a platter was made in a lab directory not calibra's own")
			}
		})
	}
}

// TestCleanupTrustsNoPlantedRecord: clean finds the cache to remove only
// in the lab's own records; another account's calibra-lab naming a
// directory of the cache's name, or a link at calibra-lab, is refused
// (exit 2) and what they name is left alone. A record naming a directory
// that is no longer calibra's own is left too.
func TestCleanupTrustsNoPlantedRecord(t *testing.T) {
	testenv.Stranger(t)
	t.Run("another account's calibra-lab", func(t *testing.T) {
		path := testenv.StorageDir(t)
		victim := filepath.Join(canaryDir(t), "x-"+cachePrefix+"y")
		if err := os.Mkdir(victim, 0o700); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(path, DirName)
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, rec := range []string{flashPointer, "lab.json"} {
			data := victim
			if rec == "lab.json" {
				data = fmt.Sprintf(`{"cache_dir":%q}`, victim)
			}
			if err := os.WriteFile(filepath.Join(root, rec), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			giveAway(t, filepath.Join(root, rec))
		}
		giveAway(t, root)
		_, err := Cleanup(path, nil)
		wantInputError(t, err, "Cleanup")
		if _, err := os.Stat(victim); err != nil {
			t.Fatalf("clean removed %s, named by another account: %v", victim, err)
		}
	})
	t.Run("calibra-lab a link", func(t *testing.T) {
		path := testenv.StorageDir(t)
		canary := canaryDir(t)
		if err := os.WriteFile(filepath.Join(canary, "keep"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(canary, filepath.Join(path, DirName)); err != nil {
			t.Fatal(err)
		}
		_, err := Cleanup(path, nil)
		wantInputError(t, err, "Cleanup")
		if _, err := os.Stat(filepath.Join(canary, "keep")); err != nil {
			t.Errorf("clean removed what a calibra-lab link pointed at: %v", err)
		}
	})
	t.Run("a recorded cache no longer calibra's", func(t *testing.T) {
		path := testenv.StorageDir(t)
		shm := t.TempDir() // stands in for /dev/shm
		if err := os.Chmod(shm, os.ModeSticky|0o777); err != nil {
			t.Fatal(err)
		}
		canary, intact := testenv.Canary(t)
		taken := filepath.Join(shm, cachePrefix+"taken")
		plantCache(t, taken, canary)
		root := filepath.Join(path, DirName)
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, flashPointer), []byte(taken), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Cleanup(path, nil); err == nil {
			t.Fatalf("clean said nothing of the cache it left")
		}
		if _, err := os.Lstat(filepath.Join(taken, "cache")); err != nil {
			t.Fatalf("clean removed another account's directory %s: %v", taken, err)
		}
		intact()
	})
}

// TestFlashCacheDirIsPrivate: the stack's flash cache directory has a
// random name, 0700, in cache_dir, found again from the lab's record
// while it is calibra's own; a planted directory at the old predictable
// name is never used; a recorded one another account now holds, or one
// outside cache_dir, is refused in one sentence.
func TestFlashCacheDirIsPrivate(t *testing.T) {
	testenv.Stranger(t)
	shm := t.TempDir() // stands in for /dev/shm: 1777
	if err := os.Chmod(shm, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	path := testenv.StorageDir(t)
	parts, err := Parse("hdd+flash-cache:cache_dir=" + shm)
	if err != nil {
		t.Fatal(err)
	}
	s := &Stack{Parts: parts, Root: filepath.Join(path, DirName)}
	if err := os.Mkdir(s.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	// What the old code used, made first by another account.
	canary, intact := testenv.Canary(t)
	old := filepath.Join(shm, fmt.Sprintf("%s%x", cachePrefix, fnv64a(s.Root)))
	plantCache(t, old, canary)

	dir, err := s.flashDir()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(dir)
	if err != nil || dir == old || filepath.Dir(dir) != shm || st.Mode().Perm() != 0o700 || !st.IsDir() {
		t.Fatalf("the cache directory %s (%v, %v): want a new 0700 directory in %s, not %s", dir, st.Mode(), err, shm, old)
	}
	tier, err := OpenTier(TierConfig{Platter: writePlatter(t), CacheDir: dir, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// A power cut: the server gone, the cache kept; the next start finds it.
	again, err := s.flashDir()
	if err != nil || again != dir {
		t.Fatalf("after a cut the cache is %s (%v), want %s", again, err, dir)
	}
	intact()
	if err := tier.Close(); err != nil {
		t.Fatal(err)
	}
	// Gone at a clean close: another account takes the name; it is not
	// used.
	plantCache(t, dir, canary)
	_, err = s.flashDir()
	wantInputError(t, err, "a recorded cache another account holds")
	intact()

	// A record naming a directory outside cache_dir is not followed.
	elsewhere := filepath.Join(t.TempDir(), cachePrefix+"elsewhere")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(filepath.Join(s.Root, flashPointer), []byte(elsewhere)); err != nil {
		t.Fatal(err)
	}
	_, err = s.flashDir()
	wantInputError(t, err, "a recorded cache outside cache_dir")
}

func writePlatter(t *testing.T) string {
	t.Helper()
	platter := filepath.Join(t.TempDir(), "platter")
	if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	return platter
}

// fnv64a is the hash the old code named the flash cache's directory by.
func fnv64a(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
