package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/hostiletest"
)

// A run directory another account wrote, its name and every field hostile
// (hostiletest.Text: ESC/OSC, BEL, CSI, C1, newlines, HTML, U+202E, a
// formula): importing it, checking it, listing it in every format of
// history, reporting it, comparing it and the errors that name it print
// no control or bidirectional character on the terminal.
func TestHostileRunPrintsNoControl(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	root := t.TempDir()
	hostile := hostiletest.Run(t, root, filepath.Join(fixtureRuns, "oltp-base"))
	base := filepath.Join(fixtureRuns, "oltp-base")
	// what names the command in a failure: args hold the hostile name.
	run := func(what string, want int, args ...string) {
		t.Helper()
		code, stdout, stderr := clitest.Run(t, args...)
		if code != want {
			t.Errorf("%s: exit %d, want %d\n%q\n%q", what, code, want, stdout, stderr)
		}
		hostiletest.Check(t, what+"'s stdout", stdout, false)
		hostiletest.Check(t, what+"'s stderr", stderr, false)
	}
	run("store import", 0, "store", "import", "--store", db, hostile)
	for _, format := range []string{"text", "md", "csv", "json"} {
		run("history --format "+format, 0, "history", "--store", db, "--format", format)
		run("history --metric --format "+format, 0, "history", "--store", db, "--format", format, "--metric", "oltp.nopm")
	}
	run("report", 0, "report", hostile)
	run("compare --html", 0, "compare", base, hostile, "--html", filepath.Join(t.TempDir(), "compare.html"))
	// A directory that went away, and one that holds no run: each is named.
	if err := os.Remove(filepath.Join(hostile, "results.json")); err != nil {
		t.Fatal(err)
	}
	run("store check", 1, "store", "check", "--store", db)
	run("store import of no run", 2, "store", "import", "--store", db, hostile)
}
