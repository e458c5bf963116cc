package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/pathlock"
)

// Every bad input gets exit 2 and one sentence that names the problem and
// the fix, before anything is written.
func TestBadInputExitsTwoWithOneClearSentence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope")
	brokenStudy := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(brokenStudy, []byte("version: 1\nsteps:\n  - kind: oltp\n    userz: 3\n  - kind: rampp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string // fragments of the sentence on stderr
	}{
		{"unknown flag", []string{"oltp", "run", "--wharehouses", "2"}, []string{"unknown flag: --wharehouses", "calibra oltp run --help"}},
		{"unknown command", []string{"olpt"}, []string{`unknown command "olpt"`, "calibra --help"}},
		{"warehouses not positive", []string{"oltp", "build", "--warehouses", "0", "--path", dir}, []string{"--warehouses 0 is not positive", "1 or more"}},
		{"users not positive", []string{"oltp", "run", "--users", "-3", "--path", dir}, []string{"--users -3 is not positive"}},
		{"duration not positive", []string{"oltp", "run", "--duration", "0s", "--path", dir}, []string{"--duration 0s is not positive"}},
		{"unknown mode", []string{"oltp", "run", "--mode", "fast", "--path", dir}, []string{`--mode "fast" is not a transaction mode`, "procedures or client"}},
		{"bad keying scale", []string{"oltp", "run", "--keying-thinking", "-1", "--path", dir}, []string{`--keying-thinking "-1"`, "off, on"}},
		{"more users than terminals", []string{"oltp", "run", "--warehouses", "2", "--users", "21", "--keying-thinking", "on", "--path", dir},
			[]string{"a warehouse has at most 10", "at most 20 users"}},
		{"missing path", []string{"oltp", "build", "--path", missing}, []string{"the path " + missing + " does not exist", "create it"}},
		{"path is a file", []string{"oltp", "build", "--path", file}, []string{"is not a directory"}},
		{"warehouses past any size", []string{"oltp", "build", "--warehouses", "274877906944", "--path", dir}, []string{"--warehouses 274877906944 makes no possible size"}},
		{"sf not a number", []string{"dss", "build", "--sf", "NaN", "--path", dir}, []string{"--sf NaN is not a number"}},
		{"sf infinite", []string{"dss", "build", "--sf", "Inf", "--path", dir}, []string{"--sf +Inf is not a number"}},
		{"db cache zero", []string{"oltp", "build", "--db-cache", "0", "--path", dir}, []string{"--db-cache 0 is below PostgreSQL's minimum"}},
		{"db cache past memory", []string{"oltp", "build", "--db-cache", "64TB", "--path", dir}, []string{"--db-cache 64TB is more than this machine's"}},
		{"art-at outside the ramp", []string{"oltp", "ramp", "--from", "4", "--to", "16", "--step", "4", "--art-at", "6", "--path", dir}, []string{"--art-at 6 is not a load of the ramp", "4 to 16 by 4"}},
		{"iocal size below a chunk", []string{"iocal", "--size", "8KiB", "--path", dir}, []string{"--size 8KiB is below one 4 MiB sequential chunk"}},
		{"dsn file missing", []string{"oltp", "run", "--dsn-file", missing}, []string{"--dsn-file " + missing + " cannot be read"}},
		{"not enough space", []string{"oltp", "build", "--warehouses", "100000000", "--path", dir}, []string{"free but oltp build needs about", "free some space"}},
		{"no postgres binaries", []string{"oltp", "build", "--pg-bin", missing, "--path", dir}, []string{"holds no initdb and postgres", "apt-get install postgresql"}},
		{"unreachable dsn", []string{"oltp", "run", "--dsn", "postgres://bench:hunter2@127.0.0.1:1/bench"},
			[]string{"cannot connect to bench@127.0.0.1:1/bench", "check the host and port"}},
		{"unparsable dsn", []string{"oltp", "run", "--dsn", "postgres://bench:hunter2@[::1/bench"}, []string{"cannot be parsed"}},
		{"bad progress mode", []string{"oltp", "run", "--progress", "loud", "--path", dir}, []string{`--progress "loud" is not a progress mode`}},
		{"iocal jobs not positive", []string{"iocal", "--jobs", "1,0", "--path", dir}, []string{`--jobs "1,0" holds 0, which is not positive`}},
		{"iocal too many jobs", []string{"iocal", "--jobs", "2048", "--path", dir}, []string{"more than 1024"}},
		{"iocal size not positive", []string{"iocal", "--size", "0", "--path", dir}, []string{"--size 0 is not positive"}},
		{"iocal size not a size", []string{"iocal", "--size", "big", "--path", dir}, []string{`"big" is not a size`}},
		{"iocal size does not fit", []string{"iocal", "--size", "1000000GiB", "--path", dir}, []string{"free but iocal needs about", "free some space"}},
		{"iocal max latency not positive", []string{"iocal", "--max-latency", "0s", "--path", dir}, []string{"--max-latency 0s is not positive"}},
		{"iocal point not positive", []string{"iocal", "--point", "0s", "--path", dir}, []string{"--point 0s is not positive"}},
		{"iocal unknown test", []string{"iocal", "--tests", "random,fast", "--path", dir}, []string{`holds "fast", not a test`}},
		{"iocal os cache limit not positive", []string{"iocal", "--os-cache-limit", "0", "--path", dir}, []string{"--os-cache-limit 0 is not positive"}},
		{"iocal unsupported engine", []string{"iocal", "--dsn", "mysql://bench:hunter2@127.0.0.1/bench"}, []string{`engine "mysql"`, "postgres://"}},
		{"iocal os cache limit with dsn", []string{"iocal", "--dsn", "postgres://bench:hunter2@127.0.0.1:1/bench", "--os-cache-limit", "1GiB"},
			[]string{"cannot be used with --dsn"}},
		{"scale factor not positive", []string{"dss", "build", "--sf", "0", "--path", dir}, []string{"--sf 0 is not positive", "above 0"}},
		{"streams not positive", []string{"dss", "throughput", "--streams", "0", "--path", dir}, []string{"--streams 0 is not positive"}},
		{"dop negative", []string{"dss", "run", "--dop", "-2", "--path", dir}, []string{"--dop -2 is below -1"}},
		{"query timeout negative", []string{"dss", "power", "--query-timeout", "-1s", "--path", dir}, []string{"--query-timeout -1s is negative"}},
		{"no TPC-H generator", []string{"dss", "build", "--tpchgen", missing, "--path", dir},
			[]string{"--tpchgen " + missing + " is not an executable program", "pip install tpchgen-cli"}},
		{"several problems at once", []string{"oltp", "run", "--users", "0", "--duration", "-1s", "--path", dir},
			[]string{"--users 0 is not positive", "--duration -1s is not positive"}},
		{"ramp range empty", []string{"oltp", "ramp", "--from", "8", "--to", "4", "--path", dir}, []string{"the ramp from 8 to 4 users is empty"}},
		{"ramp sla not positive", []string{"oltp", "ramp", "--sla", "0s", "--path", dir}, []string{"--sla 0s is not positive"}},
		{"ramp sla metric", []string{"oltp", "ramp", "--sla-metric", "p95", "--path", dir}, []string{`--sla-metric "p95"`, "art or p90"}},
		{"unknown profile", []string{"oltp", "ramp", "--profile", "tpcc", "--path", dir}, []string{`--profile "tpcc" is not a workload profile`, "spec or hammerdb"}},
		{"open and keyed at once", []string{"oltp", "run", "--rate-per-user", "5", "--keying-thinking", "on", "--path", dir}, []string{"both pace the users"}},
		{"unknown preset", []string{"run", "--preset", "quik", "--path", dir}, []string{`--preset "quik" is not a built-in study`, "quick"}},
		{"missing study file", []string{"run", "--study", missing, "--path", dir}, []string{"cannot read the study " + missing}},
		{"broken study", []string{"run", "--study", brokenStudy, "--path", dir},
			[]string{"broken.yaml:4:5: \"userz\" is not a setting of kind oltp", "broken.yaml:5:5: \"rampp\" is not a step kind"}},
		{"preset and study", []string{"run", "--preset", "quick", "--study", brokenStudy}, []string{"--preset and --study both choose the study"}},
		{"bad set", []string{"run", "--set", "oltp.users", "--path", dir}, []string{`--set "oltp.users" is not KIND.KEY=VALUE`}},
		{"set on a missing kind", []string{"run", "--set", "oltp_check.x=1", "--path", dir}, []string{"the study has no step of kind oltp_check"}},
		{"set a bad value", []string{"run", "--set", "oltp.users=0", "--path", dir}, []string{"(oltp): --users 0 is not positive"}},
		{"threshold on an unknown metric", []string{"run", "--threshold", "oltp.nopmm > 5", "--path", dir}, []string{`names no metric of oltp`, "nopm"}},
		{"threshold unparsable", []string{"run", "--threshold", "oltp.nopm is big", "--path", dir}, []string{"has no comparison"}},
		{"study path missing", []string{"run", "--path", missing}, []string{"the path " + missing + " does not exist"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadDir(dir)
			code, stdout, stderr := run(t, c.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "hunter2") || strings.Contains(stdout, "hunter2") {
				t.Errorf("the password was printed:\n%s", stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("a stack trace was printed:\n%s", stderr)
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "calibra: ") {
					t.Errorf("stderr line %q is not a calibra sentence", line)
				}
			}
			after, _ := os.ReadDir(dir)
			if len(after) != len(before) {
				t.Errorf("something was written under --path: %d entries before, %d after", len(before), len(after))
			}
			if _, err := os.Stat(filepath.Join(dir, "..", "calibra-runs")); err == nil {
				t.Error("a run directory was created")
			}
		})
	}
}

func TestVersionPrintsToStdout(t *testing.T) {
	code, stdout, _ := run(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "calibra ") {
		t.Fatalf("version: exit %d, stdout %q", code, stdout)
	}
}

// A read-only file system is the one way to refuse writes to root, who
// ignores permission bits; it needs a mount, which needs root.
func TestReadOnlyPathExitsTwo(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only file system here (needs root): %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	code, _, stderr := run(t, "oltp", "build", "--path", dir)
	if code != 2 || !strings.Contains(stderr, "is not writable") || !strings.Contains(stderr, "choose a --path you can write to") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
}

// One command at a time per path: a second one is refused with the
// holder's name, before anything starts; clean does not remove a running
// command's instance.
func TestABusyPathIsRefused(t *testing.T) {
	requirePostgres(t)
	dir := storageDir(t)
	lock, err := pathlock.Acquire(dir, "oltp run")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{
		{"oltp", "build", "--path", dir, "--out", filepath.Join(dir, "run")},
		{"clean", "--path", dir},
	} {
		code, _, stderr := run(t, args...)
		if code != 2 || !strings.Contains(stderr, "another calibra is using "+dir+" (pid ") || !strings.Contains(stderr, "calibra oltp run)") {
			t.Errorf("%v on a busy path: exit %d\n%s", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
			t.Errorf("%v on a busy path created a run directory", args)
		}
	}
}
