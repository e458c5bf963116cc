package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Attacker is another local account (nobody) racing calibra on a shared
// host, as the adversarial sweeps did: for as long as a test runs a
// command, it plants links to root's canaries, FIFOs and directories of its
// own at every name calibra may use in every directory it can write, and
// swaps calibra's entries there for its own (rename, and
// renameat2(RENAME_EXCHANGE)). The canaries are root's: a 0600 file and a
// 0700 directory outside every path; Check fails the test if either
// changed or if anything is mounted outside the allowed places.
type Attacker struct {
	t            testing.TB
	uid, gid     int
	Canary       string // root's 0600 file
	CanaryDir    string // root's 0700 directory
	canaryIntact func()
}

// systemPython runs the racing loop: the system's, which the account
// nobody can run (not a shim under root's home).
const systemPython = "/usr/bin/python3"

// NewAttacker makes the canaries and returns the attacker; it skips the
// test without root or the account nobody (Stranger), or without python3,
// in which its racing loop is written (renameat2 has no shell command).
func NewAttacker(t testing.TB) *Attacker {
	t.Helper()
	uid, gid := Stranger(t)
	if _, err := os.Stat(systemPython); err != nil {
		t.Skipf("the attacker's racing loop needs %s: %v", systemPython, err)
	}
	a := &Attacker{t: t, uid: uid, gid: gid}
	a.Canary, a.canaryIntact = Canary(t)
	base := filepath.Dir(a.Canary) // root's, 0700: nothing the attacker can reach
	a.CanaryDir = filepath.Join(base, "private")
	if err := os.Mkdir(a.CanaryDir, 0o700); err != nil { // safefs: in t.TempDir, root's and private
		t.Fatal(err)
	}
	// The attacker must reach the canaries' names to point links at them
	// (not their content): a world-searchable way to a private place.
	for _, d := range []string{base, filepath.Dir(base)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// Dir makes a directory the attacker owns (mode 0755), as a --path or a
// working directory another account gave root.
func (a *Attacker) Dir() string {
	a.t.Helper()
	dir := StorageDir(a.t)
	if err := os.Chown(dir, a.uid, a.gid); err != nil {
		a.t.Fatal(err)
	}
	return dir
}

// Shared makes a sticky directory any account can write (a stand-in for
// /tmp or /dev/shm).
func (a *Attacker) Shared() string {
	a.t.Helper()
	dir := StorageDir(a.t)
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		a.t.Fatal(err)
	}
	return dir
}

// Plant makes, as the attacker, a link to the canary at each name in dir
// (a name with slashes gets its directories made first), before calibra
// runs.
func (a *Attacker) Plant(dir string, names ...string) {
	a.t.Helper()
	AsStranger(a.t, `dir=$1 canary=$2; shift 2
for n in "$@"; do mkdir -p "$dir/$(dirname "$n")"; ln -sfn "$canary" "$dir/$n"; done`,
		append([]string{dir, a.Canary}, names...)...)
}

// PlantFIFO makes, as the attacker, a FIFO at dir/name.
func (a *Attacker) PlantFIFO(dir, name string) {
	a.t.Helper()
	AsStranger(a.t, `mkdir -p "$(dirname "$1/$2")"; mkfifo "$1/$2"`, dir, name)
}

// race is the attacker's loop: every millisecond, for each directory and
// name, a link to the canary where the name is missing; else calibra's
// entry renamed away with a link put in its place, or exchanged with a
// directory of the attacker's whose entries are links too. It stops on
// SIGTERM or after its deadline.
const race = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
deadline = time.time() + float(sys.argv[1])
canary, canary_dir = sys.argv[2], sys.argv[3]
dirs, names = sys.argv[4].split("\n"), sys.argv[5].split("\n")
decoy = os.path.join(dirs[0], ".decoy")
try:
    os.mkdir(decoy)
    for n in names:
        os.symlink(canary, os.path.join(decoy, os.path.basename(n)))
except OSError:
    pass
while time.time() < deadline:
    for d in dirs:
        for n in names:
            p = os.path.join(d, n)
            try:
                if not os.path.lexists(p):
                    os.symlink(canary if "." in os.path.basename(n) else canary_dir, p)
                    continue
                if os.lstat(p).st_uid == os.getuid():
                    continue
                if libc.renameat2(AT_FDCWD, decoy.encode(), AT_FDCWD, p.encode(), RENAME_EXCHANGE) == 0:
                    continue
                os.rename(p, p + ".gone")
                os.symlink(canary, p)
            except OSError:
                pass
    time.sleep(0.001)
`

// Race starts the attacker's loop over names in each of dirs for the
// rest of the test (at most ten minutes: every loop of a test ends).
func (a *Attacker) Race(dirs []string, names ...string) {
	a.t.Helper()
	a.loop(race, "600", a.Canary, a.CanaryDir, strings.Join(dirs, "\n"), strings.Join(names, "\n"))
}

// swap is the attacker's loop that exchanges its directory with a link
// to another (renameat2(RENAME_EXCHANGE)) as fast as it can, so that a
// reader by name finds either, whenever it looks.
const swap = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
deadline = time.time() + float(sys.argv[1])
dir, link = sys.argv[2], sys.argv[2] + ".swap"
os.symlink(sys.argv[3], link)
while time.time() < deadline:
    libc.renameat2(-100, link.encode(), -100, dir.encode(), 2)
`

// Swap starts the attacker's loop exchanging dir, its own, with a link to
// target for the rest of the test (at most ten minutes).
func (a *Attacker) Swap(dir, target string) {
	a.t.Helper()
	a.loop(swap, "600", dir, target)
}

// loop runs a python script as the attacker until the test ends.
func (a *Attacker) loop(script string, args ...string) {
	a.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, systemPython, append([]string{"-c", script}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid)}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if s := stderr.String(); strings.Contains(s, "Traceback") {
			a.t.Errorf("the attacker's loop broke:\n%s", s)
		}
	})
}

// Check fails the test if a canary changed, if out (a command's output)
// quotes the canary file, or if something was mounted since NewAttacker.
func (a *Attacker) Check(out string) {
	a.t.Helper()
	a.canaryIntact()
	if entries, err := os.ReadDir(a.CanaryDir); err != nil || len(entries) != 0 {
		a.t.Errorf("root's canary directory changed: %d entries, %v", len(entries), err)
	}
	if st, err := os.Lstat(a.CanaryDir); err != nil || st.Mode() != os.ModeDir|0o700 {
		a.t.Errorf("root's canary directory: mode %v, %v", st.Mode(), err)
	}
	if strings.Contains(out, canaryText[:12]) {
		a.t.Errorf("the output quotes root's canary file:\n%s", out)
	}
	// Mounts come and go with parallel tests; one on a canary is the harm.
	if now := mountPoints(); strings.Contains(now, a.CanaryDir) {
		a.t.Errorf("something is mounted on root's canary directory:\n%s", now)
	}
}

// mountPoints lists the mount points of this mount namespace.
func mountPoints() string {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			points = append(points, f[4])
		}
	}
	return strings.Join(points, "\n")
}

// Settle gives the racing loop a moment to plant its first round before
// a command starts (not a bound on anything: a slower loop only plants
// later, which the same test also covers).
func (a *Attacker) Settle() { time.Sleep(50 * time.Millisecond) }
