package cli

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The attacker tests of docs/security.md: another local account (nobody)
// races every command, as the adversarial sweeps did, planting links,
// FIFOs and directories of its own at every name calibra uses in every
// directory it can write, and swapping calibra's entries for links while
// the command runs. Root's canaries must come out unchanged, and every
// command must complete or refuse in one sentence with exit 2.

// names are the entries calibra makes under --path, a run directory and
// the places beside them; the attacker races every one.
var attackedNames = []string{
	"calibra.lock", "calibra-device", "calibra-device/w0", "calibra-device/w1",
	"calibra-lab", "calibra-lab/fs", "calibra-lab/fuse", "calibra-lab/flash-cache-dir",
	"calibra-lab/lab.json", "calibra-lab/platter.img", "calibra-pg", "calibra-mariadb",
	"calibra-instances", "calibra-instances/1", "calibra-runs",
	"logs", "logs/calibra.log", "logs/server.log", "raw", "results.json",
}

// attackedCommands are every command that writes under --path, with the
// smallest sizes that still run it.
func attackedCommands(fio string) map[string][]string {
	return map[string][]string{
		"device":       {"device", "--fio", fio, "--specs", "4k-randread", "--qd", "1", "--size", "16M", "--runtime", "1s"},
		"iocal":        {"iocal", "--runtime", "1s"},
		"oltp build":   {"oltp", "build", "--warehouses", "1"},
		"oltp run":     {"oltp", "run", "--duration", "2s"},
		"oltp check":   {"oltp", "check"},
		"dss build":    {"dss", "build", "--scale", "0.01"},
		"dss power":    {"dss", "power", "--scale", "0.01"},
		"run quick":    {"run", "--preset", "quick"},
		"lab check":    {"lab", "check", "--lab", "hdd+flash-cache"},
		"durability":   {"durability", "--lab", "hdd", "--cycles", "1", "--load", "1s"},
		"clean":        {"clean"},
		"lab nv-cache": {"lab", "check", "--lab", "hdd+nv-cache"},
		"lab cliff":    {"lab", "check", "--lab", "cliff"},
	}
}

// High (calibra-device, calibra-lab, calibra-instances, clean's swap
// race): a --path another account owns lets it swap calibra's entries
// for links after any check. Every command refuses such a path in one
// sentence before it makes anything, while the attacker races every name.
func TestAttackerOwnedPathIsRefusedByEveryCommand(t *testing.T) {
	t.Parallel()
	fio := fakeFio(t, "fio-3.33")
	for name, args := range attackedCommands(fio) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := testenv.NewAttacker(t)
			path := a.Dir()
			out := filepath.Join(t.TempDir(), "run")
			a.Race([]string{path}, attackedNames...)
			a.Settle()
			code, stdout, stderr := run(t, append(args, "--path", path, "--out", out, "--progress", "none")...)
			if name == "clean" || name == "oltp check" {
				code, stdout, stderr = run(t, append(args, "--path", path)...)
			}
			refusedInOneSentence(t, code, stderr, path+" belongs to the account nobody")
			a.Check(stdout + stderr)
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a run directory was made for a refused command: %v", err)
			}
		})
	}
}

// High: an existing --out that others can write (/tmp itself) let links
// at logs/calibra.log and raw/... have root append its log to, or fio
// truncate, root's files; a FIFO at logs/calibra.log hung the run.
func TestOutOthersCanWriteIsRefused(t *testing.T) {
	t.Parallel()
	fio := fakeFio(t, "fio-3.33")
	for _, plant := range []string{"links", "fifo"} {
		t.Run(plant, func(t *testing.T) {
			t.Parallel()
			a := testenv.NewAttacker(t)
			out := a.Shared()
			if plant == "fifo" {
				a.PlantFIFO(out, "logs/calibra.log")
			} else {
				a.Plant(out, "logs/calibra.log", "raw/device-4k-randread-qd1.log", "results.json")
			}
			a.Race([]string{out}, attackedNames...)
			code, stdout, stderr := run(t, "device", "--fio", fio, "--path", storageDir(t), "--out", out, "--progress", "none")
			refusedInOneSentence(t, code, stderr, out+" is writable by other accounts")
			a.Check(stdout + stderr)
		})
	}
}

// High: sudo calibra in another account's project directory, the default
// --out: the account renamed calibra-runs mid-run and made it again with
// raw linked elsewhere. calibra refuses to make its runs there.
func TestDefaultOutInAnotherAccountsDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	fio := fakeFio(t, "fio-3.33")
	a := testenv.NewAttacker(t)
	cwd := a.Dir()
	a.Race([]string{cwd}, "calibra-runs")
	code, stderr := runIn(t, cwd, "device", "--fio", fio, "--path", storageDir(t), "--progress", "none")
	refusedInOneSentence(t, code, stderr, cwd+" belongs to the account nobody")
	a.Check(stderr)
}

// Critical: the lab kept its flash cache in /dev/shm under a name made
// from --path, which another account could make first with cache and
// journal linked to root's files: lab check truncated one to the cache's
// size. The cache directory is now a private one of a random name; the
// old name, planted, is left alone and the canary unchanged.
func TestLabCacheIgnoresAPlantedDirectory(t *testing.T) {
	t.Parallel()
	requireLab(t)
	a := testenv.NewAttacker(t)
	shm := a.Shared() // a stand-in for /dev/shm, which the lab's cache_dir names
	path := storageDir(t)
	h := fnv.New64a()
	h.Write([]byte(filepath.Join(path, lab.DirName)))
	old := fmt.Sprintf("calibra-lab-cache-%x", h.Sum64())
	a.Plant(shm, old+"/cache", old+"/journal")
	a.Race([]string{shm}, old, old+"/cache", old+"/journal")
	code, stdout, stderr := run(t, "lab", "check", "--lab", "hdd+flash-cache:cache_dir="+shm, "--path", path)
	if code != fault.ExitOK && code != fault.ExitInput {
		t.Errorf("lab check: exit %d\n%s", code, stderr)
	}
	a.Check(stdout + stderr)
	if code, _, stderr := run(t, "clean", "--path", path); code != 0 {
		t.Errorf("clean: exit %d\n%s", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(shm, old)); err != nil {
		t.Errorf("clean removed the other account's directory: %v", err)
	}
}

// High: calibra-lab left behind as another account's (or with links at
// fs, fuse and flash-cache-dir) made root mount over, or write to, what
// the links named. Under a --path of root's, such a calibra-lab is
// refused in one sentence, and nothing is mounted.
func TestLabRefusesACalibraLabNotItsOwn(t *testing.T) {
	t.Parallel()
	requireLab(t)
	for _, c := range []struct{ name, plant string }{
		{"another account's", `mkdir -m 0755 "$1/calibra-lab"`},
		{"links inside", `mkdir -m 0755 "$1/calibra-lab"; ln -s "$2" "$1/calibra-lab/fs"; ln -s "$2" "$1/calibra-lab/fuse"; ln -s "$3" "$1/calibra-lab/flash-cache-dir"`},
		{"a link", `ln -s "$2" "$1/calibra-lab"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := testenv.NewAttacker(t)
			path := storageDir(t)
			// The account made it while it could write --path; now it cannot.
			if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
			testenv.AsStranger(t, c.plant, path, a.CanaryDir, a.Canary)
			if err := os.Chmod(path, 0o755); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, "lab", "check", "--lab", "hdd+flash-cache", "--path", path)
			refusedInOneSentence(t, code, stderr, filepath.Join(path, lab.DirName))
			a.Check(stdout + stderr)
		})
	}
}

// Low: a FIFO given as an input blocked report, compare and merge forever,
// deaf to signals. Each now refuses it at once with exit 2 (merge's hlog:
// internal/merge's tests).
func TestFIFOInputsAreRefused(t *testing.T) {
	t.Parallel()
	fifoRun := func(file string) string {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixtureRuns, "oltp-base"))); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, file))
		if err := syscall.Mkfifo(filepath.Join(dir, file), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	base, _ := filepath.Abs(filepath.Join(fixtureRuns, "oltp-base"))
	for name, args := range map[string][]string{
		"report results.json":   {"report", fifoRun("results.json")},
		"report timeseries.csv": {"report", fifoRun("timeseries.csv")},
		"compare results.json":  {"compare", base, fifoRun("results.json")},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan int, 1)
			var stderr string
			go func() {
				code, _, e := run(t, args...)
				stderr = e
				done <- code
			}()
			select {
			case code := <-done:
				if code != fault.ExitInput || !strings.Contains(stderr, "not a regular file") {
					t.Errorf("exit %d, want 2 naming the FIFO:\n%s", code, stderr)
				}
			case <-time.After(time.Minute): // a hang, not a bound: a FIFO with no writer blocks forever
				t.Fatal("blocked on the FIFO")
			}
		})
	}
}

// Low: a label longer than a path can hold made the default --out spin
// at full CPU forever; oltp run's implicit build skipped oltp build's
// space check and grew to 13 GB. Both are refused before anything is made.
func TestUnboundedInputsAreRefused(t *testing.T) {
	t.Parallel()
	fio := fakeFio(t, "fio-3.33")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"a 5000-character label":                   {[]string{"device", "--fio", fio, "--label", strings.Repeat("a", 5000)}, "--label"},
		"oltp run's implicit build past the space": {[]string{"oltp", "run", "--warehouses", "99999999"}, "free but"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, cwd := storageDir(t), storageDir(t)
			code, stderr := runIn(t, cwd, append(c.args, "--path", path, "--progress", "none")...)
			refusedInOneSentence(t, code, stderr, c.want)
			for _, dir := range []string{path, cwd} {
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("%s holds %v after a refusal", dir, entries)
				}
			}
		})
	}
}
