package cli

import (
	"encoding/json"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// A command that writes a run directory records it in the store when the
// run ends, here a failed one (the fake fio fails); history lists it,
// store import of fixture runs adds theirs, and check finds a directory
// that went away.
func TestStoreRecordsRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "store", "r.db")
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--fio", clitest.FakeFio(t, "fio-3.33"), "--out", out, "--progress", "none", "--store", "sqlite:"+db)
	if code != 1 {
		t.Fatalf("device with a failing fio: exit %d, want 1:\n%s", code, stderr)
	}
	// The run ends saying where it recorded it (then comes the error).
	if i := strings.Index(stderr, "\nrecorded in the results store "+db+" (calibra history lists it)\n"); i < strings.Index(stderr, "\nresults: ") {
		t.Errorf("the run does not end saying where it was recorded:\n%s", stderr)
	}
	if st, err := os.Stat(filepath.Dir(db)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the store's directory: %v", err)
	}
	history := func(args ...string) []store.Row {
		t.Helper()
		code, stdout, stderr := clitest.Run(t, append([]string{"history", "--json", "--store", "sqlite:" + db}, args...)...)
		if code != 0 {
			t.Fatalf("history: exit %d:\n%s", code, stderr)
		}
		var rows []store.Row
		if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
			t.Fatalf("history --json: %v\n%s", err, stdout)
		}
		return rows
	}
	rows := history()
	if len(rows) != 1 || rows[0].Status != results.StatusFailed || rows[0].Dir != out || rows[0].Command != "device" {
		t.Fatalf("history after a failed device run: %+v", rows)
	}

	// Import fixtures (copies, so that one can go away), twice: by run id.
	dir := t.TempDir()
	var dirs []string
	for _, name := range []string{"oltp-base", "quick"} {
		data, err := os.ReadFile(filepath.Join(fixtureRuns, name, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for range 2 {
		code, stdout, stderr := clitest.Run(t, append([]string{"store", "import", "--store", "sqlite:" + db}, dirs...)...)
		if code != 0 || strings.Count(stdout, "recorded ") != 2 {
			t.Fatalf("store import: exit %d\n%s%s", code, stdout, stderr)
		}
	}
	if rows := history(); len(rows) != 3 {
		t.Errorf("%d runs after importing two twice beside one, want 3", len(rows))
	}
	if rows := history("--status", "failed", "--since", "1h"); len(rows) != 1 || rows[0].Command != "device" {
		t.Errorf("history --status failed --since 1h: %+v, want the device run", rows)
	}
	code, stdout, _ := clitest.Run(t, "history", "--metric", "oltp.nopm", "--label", "b*", "--format", "json", "--store", "sqlite:"+db)
	var trend []store.Series
	if err := json.Unmarshal([]byte(stdout), &trend); err != nil || code != 0 {
		t.Fatalf("history --metric --format json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(trend) != 1 || trend[0].Label != "base" || len(trend[0].Points) != 1 || trend[0].Points[0].Value.Value < 19769 || trend[0].Points[0].Value.Value > 19770 {
		t.Errorf("history --metric oltp.nopm --label 'b*': %+v", trend)
	}
	code, stdout, _ = clitest.Run(t, "history", "--metric", "oltp.nopm", "--store", "sqlite:"+db)
	if code != 0 || !strings.Contains(stdout, "oltp.nopm of lead-a on vm") || !strings.Contains(stdout, "19769.82") || !strings.Contains(stdout, "MEDIAN") {
		t.Errorf("history --metric oltp.nopm: exit %d\n%s", code, stdout)
	}

	// --store-file names the store too, and says when others can read it.
	storeFile := filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(storeFile, []byte("sqlite:"+db+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o600} {
		if err := os.Chmod(storeFile, mode); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := clitest.Run(t, "history", "--store-file", storeFile, "--format", "csv")
		warned := strings.Contains(stderr, "--store-file "+storeFile+" is readable by its group or others")
		if code != 0 || strings.Count(stdout, "\n") != 4 || warned != (mode == 0o644) {
			t.Errorf("history --store-file (mode %o): exit %d, warned %v\n%s%s", mode, code, warned, stdout, stderr)
		}
	}

	if code, stdout, stderr := clitest.Run(t, "store", "check", "--store", "sqlite:"+db); code != 0 {
		t.Errorf("store check of an agreeing store: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = clitest.Run(t, "store", "check", "--store", "sqlite:"+db)
	if code != 1 || !strings.Contains(stdout, dirs[0]+"): the run directory is gone") || !strings.Contains(stderr, "1 of 3 recorded runs disagree") {
		t.Errorf("store check with a directory gone: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A store that cannot be written is one warning line; the run's exit code
// stays its own.
func TestStoreUnwritableWarns(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(shared, "r.db")
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--fio", clitest.FakeFio(t, "fio-3.33"), "--out", out, "--progress", "none", "--store", "sqlite:"+db)
	if code != 1 {
		t.Fatalf("exit %d, want the run's own 1:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "not recorded in the results store"); n != 1 || !strings.Contains(stderr, "calibra store import "+out) {
		t.Errorf("want one warning line naming the fix:\n%s", stderr)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a store was made in a directory other accounts can write")
	}
}
