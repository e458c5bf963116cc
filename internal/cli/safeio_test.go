package cli

import (
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// The readers and the run directory under the safefs rule (issue 36): a
// FIFO given to report, compare or merge is refused at once instead of
// blocking for ever; a link at an input is not followed, and no error
// quotes what it points at; an --out others can write is never a run
// directory, whatever was planted in it.

// partitionRun is a run directory holding partition 1/1 of a split oltp
// run, with no logs under raw/ yet.
func partitionRun(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p1")
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	d, err := results.Create(dir, &results.Run{StartedAt: at, Meta: results.Meta{ToolVersion: "test", Command: "oltp run"}})
	if err != nil {
		t.Fatal(err)
	}
	body := &results.OLTP{Workload: "tpcc-like", Warehouses: 1, Users: 1,
		Partition: &results.Partition{Index: 1, Of: 1, StartAt: &at, UsersTotal: 1, HomeWarehouses: 1, Counters: true}}
	st := results.Step{StepHeader: results.StepHeader{Kind: results.KindOLTP, Name: "oltp", Status: results.StatusComplete, StartedAt: at}, Body: body}
	if err := d.Update(func(r *results.Run) { r.Steps, r.Status = []results.Step{st}, results.StatusComplete }); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Low: a FIFO given as results.json (report, compare) or as a histogram
// log (merge) blocked for ever, deaf to signals. It is refused at once.
func TestReadersRefuseAFIFO(t *testing.T) {
	results1 := t.TempDir()
	fifo(t, filepath.Join(results1, "results.json"))
	hlog := partitionRun(t)
	fifo(t, filepath.Join(hlog, "raw", "oltp-window.hlog"))
	dev, err := filepath.Abs(filepath.Join(fixtureRuns, "device-a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for name, args := range map[string][]string{
		"report":  {"report", results1},
		"compare": {"compare", dev, results1},
		"merge":   {"merge", hlog},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := clitest.Run(t, args...)
			refusedInOneSentence(t, code, stderr, "is not a regular file")
		})
	}
}

// Low: a link at an hlog made merge quote the first line of the file it
// pointed at (/etc/shadow) in its error. The link is refused, unread.
func TestMergeFollowsNoLinkAndQuotesNothing(t *testing.T) {
	t.Chdir(t.TempDir())
	secret := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(secret, []byte("root:$6$secret-hash:19000:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := partitionRun(t)
	if err := os.Symlink(secret, filepath.Join(dir, "raw", "oltp-window.hlog")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := clitest.Run(t, "merge", dir)
	refusedInOneSentence(t, code, stderr, "is a symbolic link")
	if strings.Contains(stderr+stdout, "secret-hash") || strings.Contains(stderr+stdout, "root:") {
		t.Errorf("merge quoted the file the link points at:\n%s", stderr)
	}
}
