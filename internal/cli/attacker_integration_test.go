package cli

import (
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
// smallest sizes that still run it; OUT stands for the run directory.
func attackedCommands(fio string) map[string][]string {
	return map[string][]string{
		"device":       {"device", "--fio", fio, "--specs", "4k-randread", "--qd", "1", "--size", "16M", "--runtime", "1s", "--out", "OUT"},
		"iocal":        {"iocal", "--jobs", "1", "--out", "OUT"},
		"oltp build":   {"oltp", "build", "--warehouses", "1", "--out", "OUT"},
		"oltp run":     {"oltp", "run", "--duration", "2s", "--out", "OUT"},
		"oltp check":   {"oltp", "check"},
		"dss build":    {"dss", "build", "--out", "OUT"},
		"dss power":    {"dss", "power", "--out", "OUT"},
		"run quick":    {"run", "--preset", "quick", "--out", "OUT"},
		"lab check":    {"lab", "check", "--lab", "hdd+flash-cache"},
		"lab nv-cache": {"lab", "check", "--lab", "hdd+nv-cache"},
		"lab cliff":    {"lab", "check", "--lab", "cliff"},
		"durability":   {"durability", "--lab", "hdd", "--cycles", "1", "--load", "1s", "--out", "OUT"},
		"clean":        {"clean"},
	}
}

// High (calibra-device, calibra-lab, calibra-instances, clean's swap
// race): a --path another account owns lets it swap calibra's entries
// for links after any check. Every command refuses such a path in one
// sentence before it makes anything, while the attacker races every name.
func TestAttackerOwnedPathIsRefusedByEveryCommand(t *testing.T) {
	t.Parallel()
	fio := clitest.FakeFio(t, "fio-3.33")
	for name, args := range attackedCommands(fio) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := testenv.NewAttacker(t)
			path := a.Dir()
			out := filepath.Join(t.TempDir(), "run")
			a.Race([]string{path}, attackedNames...)
			a.Settle()
			args = slices.Clone(args)
			if i := slices.Index(args, "OUT"); i >= 0 {
				args[i] = out
			}
			code, stdout, stderr := clitest.Run(t, append(args, "--path", path)...)
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
	fio := clitest.FakeFio(t, "fio-3.33")
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
			code, stdout, stderr := clitest.Run(t, "device", "--fio", fio, "--path", clitest.StorageDir(t), "--out", out, "--progress", "none")
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
	fio := clitest.FakeFio(t, "fio-3.33")
	a := testenv.NewAttacker(t)
	cwd := a.Dir()
	a.Race([]string{cwd}, "calibra-runs")
	code, stderr := clitest.RunIn(t, cwd, "device", "--fio", fio, "--path", clitest.StorageDir(t), "--progress", "none")
	refusedInOneSentence(t, code, stderr, cwd+" belongs to the account nobody")
	a.Check(stderr)
}

// Low: a label longer than a path can hold made the default --out spin
// at full CPU forever; oltp run's implicit build skipped oltp build's
// space check and grew to 13 GB. Both are refused before anything is made.
func TestUnboundedInputsAreRefused(t *testing.T) {
	t.Parallel()
	fio := clitest.FakeFio(t, "fio-3.33")
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"a 5000-character label":                   {[]string{"device", "--fio", fio, "--label", strings.Repeat("a", 5000)}, "--label"},
		"oltp run's implicit build past the space": {[]string{"oltp", "run", "--warehouses", "99999999"}, "free but"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path, cwd := clitest.StorageDir(t), clitest.StorageDir(t)
			code, stderr := clitest.RunIn(t, cwd, append(c.args, "--path", path, "--progress", "none")...)
			refusedInOneSentence(t, code, stderr, c.want)
			for _, dir := range []string{path, cwd} {
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("%s holds %v after a refusal", dir, entries)
				}
			}
		})
	}
}
