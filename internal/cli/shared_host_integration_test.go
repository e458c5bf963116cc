package cli

import (
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The cases of a shared host: another local account (nobody) plants
// links and directories where calibra, as root, makes or removes its own,
// and calibra must neither write nor remove what they point at. See
// docs/security.md.

// socketBase is the private directory of calibra's socket directories
// (under this test's TMPDIR when it sets one).
func socketBase(t *testing.T) string {
	t.Helper()
	base, err := server.SocketBase(true)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// sharedDir makes a directory every account can write to: sticky, as
// /tmp is, or not, as a careless --path is.
func sharedDir(t *testing.T, sticky bool) string {
	t.Helper()
	dir := clitest.StorageDir(t)
	mode := os.FileMode(0o777)
	if sticky {
		mode |= os.ModeSticky
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// precious is a file of root's that the other account aims its links at;
// untouched fails the test if calibra wrote, truncated or removed it.
func precious(t *testing.T) (path string, untouched func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "precious")
	const text = "root's own, not calibra's to write\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if data, err := os.ReadFile(path); err != nil || string(data) != text {
			t.Errorf("the file the other account pointed at now holds %q (%v)", data, err)
		}
	}
}

// refusedInOneSentence fails unless calibra exited 2 with one line that
// names what, and nothing else on stderr.
func refusedInOneSentence(t *testing.T, code int, stderr, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	if code != fault.ExitInput || !strings.HasPrefix(last, "calibra: ") || !strings.Contains(last, what) {
		t.Errorf("exit %d, want %d with one sentence naming %s:\n%s", code, fault.ExitInput, what, stderr)
	}
}

// Critical: calibra-sock-* in the shared temporary directory is a name any
// account can take first. Another account's directory of that name, with
// calibra.lock a link to root's file, must not make clean write the file:
// calibra's socket directories live in its own private base now, and
// clean looks nowhere else.
func TestCleanIgnoresAnotherAccountsSocketDirectories(t *testing.T) {
	path := clitest.StorageDir(t)
	tmp := sharedDir(t, true)
	t.Setenv("TMPDIR", tmp)
	target, untouched := precious(t)
	testenv.AsStranger(t, `for d in calibra-sock-planted calibra-mysock-planted; do
		mkdir -m 0777 "$1/$d"; ln -s "$2" "$1/$d/calibra.lock"; done`, tmp, target)

	code, _, stderr := clitest.Run(t, "clean", "--path", path)
	if code != 0 {
		t.Errorf("clean: exit %d\n%s", code, stderr)
	}
	untouched()
	for _, d := range []string{"calibra-sock-planted", "calibra-mysock-planted"} {
		if _, err := os.Lstat(filepath.Join(tmp, d, "calibra.lock")); err != nil {
			t.Errorf("clean touched the other account's %s: %v", d, err)
		}
	}
}

// The private base itself is a name in the shared temporary directory:
// another account may make it first (a directory of its own, or a link to
// one), and plant there what clean would judge. Clean refuses it in one
// sentence before it removes anything, and writes nothing through it.
func TestCleanRefusesASocketBaseAnotherAccountMade(t *testing.T) {
	for name, plant := range map[string]string{
		"directory": `mkdir -m 0777 "$1"; mkdir -m 0777 "$1/calibra-sock-planted"; ln -s "$2" "$1/calibra-sock-planted/calibra.lock"`,
		"link":      `mkdir -m 0777 "$1.real"; mkdir -m 0777 "$1.real/calibra-sock-planted"; ln -s "$2" "$1.real/calibra-sock-planted/calibra.lock"; ln -s "$1.real" "$1"`,
	} {
		t.Run(name, func(t *testing.T) {
			path := clitest.StorageDir(t)
			tmp := sharedDir(t, true)
			t.Setenv("TMPDIR", tmp)
			target, untouched := precious(t)
			base := filepath.Join(tmp, server.SocketBaseName+"0")
			testenv.AsStranger(t, plant, base, target)
			code, _, stderr := clitest.Run(t, "clean", "--path", path)
			refusedInOneSentence(t, code, stderr, base)
			untouched()
		})
	}
}

// High: PATH/calibra.lock when --path is writable by other accounts. Both
// clean and oltp check took the lock through the other account's link and
// wrote "pid N, calibra clean" into root's file; now they refuse such a
// --path before they look inside it.
func TestALockLinkUnderASharedPathIsRefused(t *testing.T) {
	clitest.RequirePostgres(t) // oltp check opens the managed instance first
	for _, args := range [][]string{{"clean"}, {"oltp", "check"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			path := sharedDir(t, false)
			target, untouched := precious(t)
			testenv.AsStranger(t, `ln -s "$2" "$1/calibra.lock"`, path, target)
			code, _, stderr := clitest.Run(t, append(args, "--path", path)...)
			refusedInOneSentence(t, code, stderr, path+" is writable by other accounts")
			untouched()
		})
	}
}

// victimTree makes, as root, files outside any --path that clean would
// remove if it followed the other account's links to them, and returns
// the tree's root and a check that every file is still there.
func victimTree(t *testing.T, files ...string) (string, func()) {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		name := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root, func() {
		t.Helper()
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(root, f)); err != nil {
				t.Errorf("clean removed %s, which the other account's link pointed at: %v", f, err)
			}
		}
	}
}

// Medium: clean removes calibra-pg, calibra-instances, calibra-instances/K
// and calibra-device under --path. Where others can write to --path, each
// may be a link out of it, to another instance's data directory (whose WAL
// clean removed), another's --instances (whose instances went) or device
// test files: clean refuses the link in one sentence and removes nothing.
func TestCleanFollowsNoLinkOutOfPath(t *testing.T) {
	cases := []struct {
		name, plant string
		victims     []string
	}{
		// Another instance's data directory, whose WAL is elsewhere.
		{"calibra-pg", `ln -s "$2/calibra-pg" "$1/calibra-pg"`,
			[]string{"calibra-pg/PG_VERSION", "calibra-wal/000000010000000000000001"}},
		{"calibra-instances", `ln -s "$2" "$1/calibra-instances"`,
			[]string{"1/calibra-pg/PG_VERSION", "1/calibra-mariadb/ibdata1"}},
		{"calibra-instances/1", `mkdir "$1/calibra-instances"; ln -s "$2/1" "$1/calibra-instances/1"`,
			[]string{"1/calibra-pg/PG_VERSION"}},
		{"calibra-device", `ln -s "$2" "$1/calibra-device"`,
			[]string{"w0", "w1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := sharedDir(t, false)
			victim, untouched := victimTree(t, c.victims...)
			if c.name == "calibra-pg" {
				if err := os.Symlink(filepath.Join(victim, "calibra-wal"), filepath.Join(victim, "calibra-pg", "pg_wal")); err != nil {
					t.Fatal(err)
				}
			}
			testenv.AsStranger(t, c.plant, path, victim)
			// --path must now pass the safefs rule: the links stay from
			// when others could write it.
			if err := os.Chmod(path, 0o755); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := clitest.Run(t, "clean", "--path", path)
			refusedInOneSentence(t, code, stderr, filepath.Join(path, c.name)+" is a symbolic link")
			untouched()
		})
	}
}

// A data directory names the other directories clean removes with it (its
// WAL through pg_wal, its standbys in a list). One that another account
// made in a --path it can write to may name anything: clean removes it,
// the account's own, but not the root-owned WAL it points at.
func TestCleanRemovesOnlyWhatTheDataDirectorysOwnerMade(t *testing.T) {
	path := sharedDir(t, false)
	victim, untouched := victimTree(t, "calibra-wal/000000010000000000000001")
	testenv.AsStranger(t, `mkdir "$1/calibra-pg"; echo 15 > "$1/calibra-pg/PG_VERSION"; ln -s "$2/calibra-wal" "$1/calibra-pg/pg_wal"`, path, victim)
	if err := os.Chmod(path, 0o755); err != nil { // --path must pass the safefs rule now
		t.Fatal(err)
	}
	code, _, stderr := clitest.Run(t, "clean", "--path", path)
	if code != 0 {
		t.Errorf("clean: exit %d\n%s", code, stderr)
	}
	untouched()
}

// Medium: calibra writes a run by path, so a run directory that another
// account can swap for a link mid-run would have root write the run
// wherever the link points. A calibra-runs the account made, or one it
// can write to, and a link planted at --out, are refused in one sentence
// before anything runs; the link's target is left as it was.
func TestARunDirectoryAnotherAccountCanSwapIsRefused(t *testing.T) {
	fio := clitest.FakeFio(t, "fio-3.33") // the run would fail later: the refusal comes first
	cases := map[string]struct {
		plant string // run as nobody in a directory everyone can write ($1), the victim $2
		out   string // --out under $1, or "" for the default ./calibra-runs/...
		want  string
	}{
		"calibra-runs of another account": {`mkdir -m 0755 "$1/calibra-runs"`, "", "belongs to the account"},
		"calibra-runs writable by others": {`mkdir -m 0777 "$1/calibra-runs"; chmod 0777 "$1/calibra-runs"`, "", "is writable by other accounts"},
		"a link at --out":                 {`ln -s "$2" "$1/run"`, "run", "is a symbolic link"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cwd := sharedDir(t, true)
			victim, untouched := victimTree(t, "kept")
			testenv.AsStranger(t, c.plant, cwd, victim)
			if name == "calibra-runs writable by others" {
				// nobody's directory, given to root as if root had made it
				if err := os.Chown(filepath.Join(cwd, "calibra-runs"), 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(cwd)
			args := []string{"device", "--path", t.TempDir(), "--fio", fio, "--progress", "none"}
			if c.out != "" {
				args = append(args, "--out", filepath.Join(cwd, c.out))
			}
			code, _, stderr := clitest.Run(t, args...)
			refusedInOneSentence(t, code, stderr, c.want)
			untouched()
			if entries, _ := os.ReadDir(victim); len(entries) != 1 {
				t.Errorf("calibra wrote into the link's target: %v", entries)
			}
		})
	}
}
