package cli

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// mountTmpfs mounts a tmpfs of size at a new directory, for the test
// (root only); opts adds mount options.
func mountTmpfs(t *testing.T, size string, opts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	o := strings.Join(append([]string{"size=" + size, "mode=700"}, opts...), ",")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", o, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// remountReadOnly makes the tmpfs at dir read-only.
func remountReadOnly(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s read-only: %v %s", dir, err, out)
	}
}

// fill writes into dir until its file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_CREATE|os.O_WRONLY, 0o600) // safefs: the test's own tmpfs
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	// Whatever a page of the last block left.
	for {
		if _, err := f.Write(block[:512]); err != nil {
			return
		}
	}
}

// oneLine checks that stderr is one line holding every want, and the
// exit code.
func oneLine(t *testing.T, what string, code int, stdout, stderr string, wantCode int, want ...string) {
	t.Helper()
	ok := code == wantCode && strings.Count(strings.TrimSpace(stderr), "\n") == 0
	for _, w := range want {
		ok = ok && strings.Contains(stderr, w)
	}
	if !ok {
		t.Errorf("%s: exit %d, want %d and one line saying %q\n%s%s", what, code, wantCode, want, stdout, stderr)
	}
}

// A store on a read-only file system is read where it is: history, store
// check and serve work on it; a command that would write it is refused in
// one sentence naming the store and the fix.
func TestStoreOnReadOnlyFileSystem(t *testing.T) {
	fs := mountTmpfs(t, "16m")
	db := filepath.Join(fs, "store", "results.db")
	run := copyRun(t, "oltp-base")
	clitest.MustRun(t, 0, "store", "import", "--store", "sqlite:"+db, run)
	// A store an older calibra left at schema version 3.
	old := filepath.Join(fs, "old", "results.db")
	if err := os.Mkdir(filepath.Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	sqlDB, err := sql.Open("sqlite", old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.Exec(`CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (3)`); err != nil {
		t.Fatal(err)
	}
	sqlDB.Close()
	remountReadOnly(t, fs)

	code, stdout, stderr := clitest.Run(t, "history", "--json", "--store", "sqlite:"+db)
	var rows []store.Row
	if err := json.Unmarshal([]byte(stdout), &rows); code != 0 || err != nil || len(rows) != 1 || rows[0].Label != "base" {
		t.Errorf("history on a read-only file system: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if code, stdout, stderr := clitest.Run(t, "store", "check", "--store", "sqlite:"+db); code != 0 || !strings.Contains(stdout, "1 recorded runs agree") {
		t.Errorf("store check on a read-only file system: exit %d\n%s%s", code, stdout, stderr)
	}
	cmd, _, seen := clitest.StartUntil(t, "calibra serve: http://", "serve", "--store", "sqlite:"+db)
	if last := seen[len(seen)-1]; !strings.HasPrefix(last, "calibra serve: http://") {
		t.Errorf("serve on a read-only file system did not start:\n%s", strings.Join(seen, "\n"))
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after Ctrl-C: %v", err)
	}

	code, stdout, stderr = clitest.Run(t, "store", "import", "--store", "sqlite:"+db, copyRun(t, "device-a"))
	oneLine(t, "store import into it", code, stdout, stderr, fault.ExitInput, "the results store "+db+" cannot be written: its file system is read-only", "give --store sqlite:PATH on a file system calibra can write")
	code, stdout, stderr = clitest.Run(t, "history", "--store", "sqlite:"+old)
	oneLine(t, "history of an older store there", code, stdout, stderr, fault.ExitInput,
		fmt.Sprintf("the results store %s has schema version 3, older than this calibra's %d, and lies on a read-only file system, where calibra cannot migrate it; mount it read-write once", old, store.SchemaVersion))
}

// A full disk is named as one, with the store's path: a new store leaves
// nothing behind (no empty results.db), and an existing one keeps its
// runs.
func TestStoreOnAFullDisk(t *testing.T) {
	fs := mountTmpfs(t, "2m")
	existing := filepath.Join(fs, "old", "results.db")
	clitest.MustRun(t, 0, "store", "import", "--store", "sqlite:"+existing, copyRun(t, "oltp-base"))
	fill(t, fs)

	fresh := filepath.Join(fs, "new", "results.db")
	for _, db := range []string{fresh, existing} {
		code, stdout, stderr := clitest.Run(t, "store", "import", "--store", "sqlite:"+db, copyRun(t, "quick"))
		oneLine(t, "store import on a full disk", code, stdout, stderr, fault.ExitInput,
			"the file system of the results store "+db+" is full; free space on it, or give --store sqlite:PATH on another file system")
	}
	if left, _ := os.ReadDir(filepath.Dir(fresh)); len(left) != 0 {
		t.Errorf("a store that could not be made left %v behind", left)
	}
	code, stdout, stderr := clitest.Run(t, "history", "--format", "csv", "--store", "sqlite:"+existing)
	if code != 0 || strings.Count(stdout, "\n") != 2 || !strings.Contains(stdout, "base") {
		t.Errorf("the existing store after a full disk: exit %d, want its one run\n%s%s", code, stdout, stderr)
	}
}

// A store another process holds a write lock on, past the busy timeout:
// a write says so with the path (exit 1, it passes); reading goes on.
func TestStoreLockedTooLong(t *testing.T) {
	db := filepath.Join(t.TempDir(), "store", "results.db")
	clitest.MustRun(t, 0, "store", "import", "--store", "sqlite:"+db, copyRun(t, "oltp-base"))
	clitest.HoldStoreLock(t, db)
	code, stdout, stderr := clitest.Run(t, "store", "import", "--store", "sqlite:"+db, copyRun(t, "quick"))
	oneLine(t, "store import while another process writes", code, stdout, stderr, fault.ExitRuntime,
		"the results store "+db+" is locked: another process has held a write transaction on it for more than 5s", "fuser "+db)
	if code, stdout, stderr := clitest.Run(t, "history", "--store", "sqlite:"+db); code != 0 || !strings.Contains(stdout, "base") {
		t.Errorf("history while another process writes: exit %d\n%s%s", code, stdout, stderr)
	}
}

// garble overwrites the middle of the store's file: its header stays, so
// it opens, and a write that touches no garbled page would succeed.
func garble(t *testing.T, db string, at int64) {
	t.Helper()
	f, err := os.OpenFile(db, os.O_WRONLY, 0) // safefs: the test's own store
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
	if _, err := f.WriteAt(junk, at); err != nil {
		t.Fatal(err)
	}
}

// A damaged store takes no record: the run keeps its directory and says
// how to record it once the store is repaired or replaced; store check
// names the path and the remedy; a file that is no database at all is
// named as damaged too.
func TestStoreDamaged(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "store", "results.db")
	var runs []string
	for _, name := range []string{"oltp-base", "repeats-a", "repeats-b", "device-a", "quick"} {
		runs = append(runs, copyRun(t, name))
	}
	clitest.MustRun(t, 0, append([]string{"store", "import", "--store", "sqlite:" + db}, runs...)...)
	garble(t, db, 3*4096)
	remedy := "recover what it holds with sqlite3 " + db + " '.recover' | sqlite3 " + db + ".recovered and put that in its place, or move it aside and record the run directories again with calibra store import DIR..."

	code, stdout, stderr := clitest.Run(t, "store", "check", "--store", "sqlite:"+db)
	oneLine(t, "store check of a damaged store", code, stdout, stderr, fault.ExitInput, "the results store "+db+" is damaged (SQLite's integrity check: ", remedy)

	// The same run into a sound store and into the damaged one: the fake
	// fio fails its step, and the run ends as it would have.
	device := func(out, db string) (int, string) {
		code, _, stderr := clitest.Run(t, "device", "--path", t.TempDir(), "--fio", clitest.FakeFio(t, "fio-3.33"), "--out", out, "--progress", "none", "--store", "sqlite:"+db)
		return code, stderr
	}
	want, _ := device(filepath.Join(dir, "sound-run"), filepath.Join(dir, "sound", "results.db"))
	out := filepath.Join(dir, "device-run")
	code, stderr = device(out, db)
	if !strings.Contains(stderr, "\ncalibra: warning: the run was not recorded: the results store "+db+" is damaged (SQLite's integrity check: ") ||
		!strings.Contains(stderr, "the run directory keeps it: once the store is repaired or replaced, record it with 'calibra store import "+out+"'\n") {
		t.Errorf("a run recorded into a damaged store: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil || code != want {
		t.Errorf("the run's exit %d (into a sound store %d) and directory (%v): a store that takes no record changes neither", code, want, err)
	}

	garble(t, db, 0)
	code, stdout, stderr = clitest.Run(t, "history", "--store", "sqlite:"+db)
	oneLine(t, "history of a file that is no database", code, stdout, stderr, fault.ExitInput, "the results store "+db+" is damaged (file is not a database)", remedy)
}

// regressedRun writes a device run that regressed against its baseline.
func regressedRun(t *testing.T, dir string, at time.Time) string {
	t.Helper()
	out := writeDeviceRun(t, dir, "nightly", at, 10, 11, 12)
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	r.Baseline = &results.Baseline{Spec: "last", Verdict: results.BaselineRegressed, Regressed: true, Reason: "4k random read IOPS fell 99%"}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// store accept takes a regressed run, by id or directory, with who and
// when; anything else is refused in one sentence with exit 2.
func TestStoreAccept(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "store", "results.db")
	day := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	good := writeDeviceRun(t, dir, "nightly", day, 1000, 1010, 990)
	bad := regressedRun(t, dir, day.Add(24*time.Hour))
	st := "sqlite:" + db
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no store yet", []string{"store", "accept", "--store", st, "run@1"}, fault.ExitInput, "the results store " + db + " holds no run yet; give the --store the run was recorded in"},
		{"store off", []string{"store", "accept", "--store", "none", "run@1"}, fault.ExitInput, "the results store is off (--store none)"},
		{"no run", []string{"store", "accept", "--store", st, "nosuchrun@1"}, fault.ExitInput, "the results store " + db + " holds no run nosuchrun@1; give a run id as calibra history --format csv lists it"},
		{"a good run", []string{"store", "accept", "--store", st, good}, fault.ExitInput, "did not regress against its baseline; accept only a run that regressed"},
		{"no one", []string{"store", "accept", "--store", st, "--by", "", bad}, fault.ExitInput, "calibra cannot tell who accepts the run (no user name); give --by NAME"},
		{"two runs", []string{"store", "accept", "--store", st, good, bad}, fault.ExitInput, "store accept"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, c.args...)
			oneLine(t, strings.Join(c.args, " "), code, stdout, stderr, c.code, c.want)
		})
		if c.name == "no store yet" {
			clitest.MustRun(t, 0, "store", "import", "--store", st, good, bad)
		}
	}
	code, stdout, stderr := clitest.Run(t, "store", "accept", "--store", st, "--by", "alice", bad)
	if code != 0 || !strings.HasPrefix(stdout, "accepted "+filepath.Base(bad)+"@") || !strings.Contains(stdout, "into later baselines (by alice, ") {
		t.Errorf("store accept of a regressed run: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = clitest.Run(t, "history", "--json", "--store", st)
	var rows []store.Row
	if err := json.Unmarshal([]byte(stdout), &rows); code != 0 || err != nil || len(rows) != 2 || rows[0].Baseline == nil || rows[0].Baseline.AcceptedBy != "alice" {
		t.Errorf("history after accept: exit %d, %v, %+v", code, err, rows)
	}
}
