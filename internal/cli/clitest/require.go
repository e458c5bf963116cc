package clitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/dss"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// RequirePostgres skips a test when no PostgreSQL server is installed,
// saying how to install one, unless CI requires it.
func RequirePostgres(t *testing.T) { t.Helper(); RequireEngine(t, postgres.Name) }

// RequirePostgres18 is an installed PostgreSQL 18 or later, or skips the
// test (fails it where testenv requires one).
func RequirePostgres18(t *testing.T) *postgres.Binaries {
	t.Helper()
	for _, b := range postgres.Installed() {
		if b.Major >= 18 {
			return &b
		}
	}
	if testenv.Required("postgresql18") {
		t.Fatal("PostgreSQL 18 is required here: .ci/setup installs it under /opt/calibra")
	}
	t.Skip("no PostgreSQL 18 build installed (.ci/setup puts one under /opt/calibra)")
	return nil
}

// RequireMariaDB skips a test when no MariaDB server is installed, saying
// how to install one, unless CI requires it.
func RequireMariaDB(t *testing.T) { t.Helper(); RequireEngine(t, mariadb.Name) }

// RequireTpchgen skips a test when the TPC-H generator is missing, saying
// how to install it, unless CI requires it.
func RequireTpchgen(t *testing.T) {
	t.Helper()
	if _, err := dss.FindGenerator(context.Background(), ""); err != nil {
		if testenv.Required("tpchgen") {
			t.Fatalf("tpchgen-cli is required here: %v", err)
		}
		t.Skipf("no TPC-H generator: %v", err)
	}
}

// RequireEngine skips a test when the registered engine's server is not
// installed, in the words of its descriptor's CheckServer (which say how
// to install it), unless CALIBRA_TEST_REQUIRE names the engine: then it
// fails. Any engine registered can be required by name.
func RequireEngine(t *testing.T, name string) {
	t.Helper()
	d, ok := engine.Lookup(name)
	if !ok {
		t.Fatalf("no engine %q is registered; the engines are %v", name, engine.Names())
	}
	testenv.Need(t, name, d.CheckServer(engine.Config{}), "the test needs "+d.Title+"'s server")
}

// RequireGalera skips a test when galera-4 (or rsync, its state
// transfer) is not installed, unless CI requires it.
func RequireGalera(t *testing.T) {
	t.Helper()
	RequireMariaDB(t)
	_, missing := mariadb.FindProvider()
	if _, err := exec.LookPath("rsync"); err != nil && missing == nil {
		missing = err
	}
	testenv.Need(t, "galera", missing, "apt-get install galera-4 rsync")
}

// RequireFio skips a test that runs fio under -short or when fio is
// missing, unless CI requires fio, which makes that a failure.
func RequireFio(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("fio")
	testenv.Need(t, "fio", err, "apt-get install fio; set CALIBRA_TEST_REQUIRE=fio to fail instead")
}

// FakeFio writes a program that prints version for --version and fails
// any job.
func FakeFio(t *testing.T, version string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fio")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && echo " + version + " && exit 0\necho 'fio: pretend failure' >&2\nexit 1\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil { // safefs: in t.TempDir, the test's own
		t.Fatal(err)
	}
	return path
}

// RequireLab skips a test where the storage lab cannot be built (no root,
// FUSE, loop devices or nbdkit), unless CALIBRA_TEST_REQUIRE names lab.
func RequireLab(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a storage lab and runs a real PostgreSQL on it; run without -short")
	}
	RequirePostgres(t)
	parts, _ := lab.Parse("hdd+flash-cache")
	if err := lab.Check(parts); err != nil {
		if testenv.Required("lab") {
			t.Fatalf("the storage lab is required here (CALIBRA_TEST_REQUIRE names lab): %v", err)
		}
		t.Skipf("the storage lab cannot be built here: %v", err)
	}
}

// NoLabLeft fails if a lab under path left a mount, loop device, FUSE
// mount or nbdkit behind.
func NoLabLeft(t *testing.T, path string) {
	t.Helper()
	if left := lab.Leftovers(path); len(left) > 0 {
		t.Fatalf("the lab under %s left: %s", path, strings.Join(left, ", "))
	}
}

// ExistingServer starts the managed instance under path by hand, as an
// existing server that calibra reaches only through --dsn, and returns a
// DSN maker for it (over its Unix socket: the instance has no TCP
// listener); it stops at the end of the test.
func ExistingServer(t *testing.T, path string) func(userinfo, db string) string {
	t.Helper()
	in := ExistingInstance(t, path)
	return func(userinfo, db string) string {
		return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", userinfo, db, in.SocketDir, in.Port)
	}
}

// ExistingInstance is ExistingServer's instance itself: its socket, port
// and data directory.
func ExistingInstance(t *testing.T, path string) *postgres.Instance {
	t.Helper()
	group := proc.NewGroup()
	t.Cleanup(func() { _ = group.StopAll(time.Minute) })
	target, err := postgres.Prepare(context.Background(), postgres.TargetConfig{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := target.Start(context.Background(), group); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Stop() })
	return target.Managed
}

// RunAudit runs a two-cycle durability audit with args on a lab of its
// own, checks that the lab and its server are gone after it and that
// clean empties its path, and returns its exit code and findings.
func RunAudit(t *testing.T, args ...string) (int, *results.Durability) {
	t.Helper()
	dir := StorageDir(t)
	out := filepath.Join(dir, "run")
	args = append([]string{"durability", "--cycles", "2", "--load", "3s", "--clients", "2",
		"--path", dir, "--out", out, "--progress", "plain", "--db-cache", "64MB", "--threshold", "durability.lost_acknowledged == 0"}, args...)
	code, stderr := RunTimed(t, args...)
	t.Logf("calibra durability: exit %d\n%s", code, stderr)
	r, err := results.Load(out)
	if err != nil || len(r.Steps) != 1 {
		t.Fatalf("exit %d, results %v: %s", code, err, stderr)
	}
	d, ok := r.Steps[0].Body.(*results.Durability)
	if !ok || r.Meta.Storage.Lab == nil {
		t.Fatalf("no durability step or no lab in meta.storage: %+v", r.Meta.Storage)
	}
	logTornWrites(t, out, d)
	NoLabLeft(t, dir)
	NoServerLeft(t, dir)
	if code, _, stderr := Run(t, "clean", "--path", dir); code != 0 {
		t.Fatalf("clean: exit %d: %s", code, stderr)
	}
	return code, d
}

// logTornWrites logs each torn cut's writes in flight as the cut left them
// (offset+length, bytes kept): what tells a cut that tore only log or
// journal writes from one that tore a page and left it whole.
func logTornWrites(t *testing.T, out string, d *results.Durability) {
	t.Helper()
	for _, c := range d.PerCycle {
		if c.Torn == nil || c.Torn.Record == "" {
			continue
		}
		var rec lab.TornRecord
		data, err := os.ReadFile(filepath.Join(out, c.Torn.Record))
		if err == nil {
			err = json.Unmarshal(data, &rec)
		}
		if err != nil {
			t.Logf("cycle %d: the torn cut's record: %v", c.Cycle, err)
			continue
		}
		var b strings.Builder
		for _, w := range rec.Writes {
			fmt.Fprintf(&b, " %d+%d kept %d", w.Offset, w.Length, w.Kept)
		}
		t.Logf("cycle %d: %d writes in flight at the cut (waited %.2f s for them):%s", c.Cycle, len(rec.Writes), rec.WaitedS, b.String())
	}
}

// SkipWhenBusy skips a test whose figures hold only on an idle machine
// (a lab tier served in calibra's own process runs at the speed the CPU
// gives it) when the machine is at least half busy over a second before
// the test starts: beside another load the test would run, then skip on
// the same evidence in its results, its minute of work wasted.
func SkipWhenBusy(t *testing.T, rerun string) {
	t.Helper()
	idle0, total0 := cpuTicks(t)
	time.Sleep(time.Second)
	idle1, total1 := cpuTicks(t)
	if total1 <= total0 {
		return
	}
	if busy := 100 * (1 - float64(idle1-idle0)/float64(total1-total0)); busy >= 50 {
		t.Skipf("the machine was %.0f%% busy before the test, so the lab's tier would not run at its own speeds; run this test alone: %s", busy, rerun)
	}
}

// cpuTicks reads the idle (with iowait) and total ticks of all CPUs.
func cpuTicks(t *testing.T) (idle, total uint64) {
	t.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	for i, f := range strings.Fields(line)[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			t.Fatalf("/proc/stat: %q: %v", line, err)
		}
		total += v
		if i == 3 || i == 4 {
			idle += v
		}
	}
	return idle, total
}
