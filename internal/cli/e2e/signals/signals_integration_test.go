//go:build integration

package signals

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestInterruptKeepsWhatWasMeasured sends SIGINT to a real calibra process
// in the middle of its timed window.
func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	if testing.Short() {
		t.Skip("builds and runs on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	// The first status line comes once the users run; three seconds later
	// the timed window has begun.
	// Paced (oltptest.PacedRate): what a signal keeps does not depend on
	// how fast the users ran.
	code, stderr := clitest.InterruptChild(t, "oltp run: 2 users", 3*time.Second, "oltp", "run", "--users", "2",
		"--rampup", "1s", "--duration", "5m", oltptest.PacedFlag, "--path", path, "--out", out, "--progress", "plain")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != results.StatusInterrupted {
		t.Fatalf("status %q, want interrupted", r.Status)
	}
	st, o := clitest.LastStep[*results.OLTP](t, out)
	if st.Status != results.StatusInterrupted || o.TPMClient <= 0 || o.DurationS <= 0 {
		t.Fatalf("step %s, tpm_client %v over %v s: what was measured is lost", st.Status, o.TPMClient, o.DurationS)
	}
	if o.NOPM != nil || o.Missing["nopm"] == "" {
		t.Fatalf("nopm %v without a reason for its absence: %v", o.NOPM, o.Missing)
	}
	clitest.NoServerLeft(t, path)
}

// A second Ctrl-C stops every process at once, and SIGHUP (a closed
// terminal) ends a run like Ctrl-C: either way results.json is finished
// (interrupted), the report is written and no server is left.
func TestSecondSignalAndHangupStillFinishTheRun(t *testing.T) {
	t.Parallel() // real servers: they overlap their waits
	if testing.Short() {
		t.Skip("runs on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	for name, sigs := range map[string][]syscall.Signal{
		"twice ctrl-c": {syscall.SIGINT, syscall.SIGINT},
		"hangup":       {syscall.SIGHUP},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := clitest.StorageDir(t)
			out := filepath.Join(t.TempDir(), "run")
			code, stderr := clitest.SignalChild(t, "oltp run: 2 users", 3*time.Second, sigs, "oltp", "run", "--users", "2",
				"--rampup", "1s", "--duration", "5m", oltptest.PacedFlag, "--path", path, "--out", out, "--progress", "plain")
			if code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, stderr)
			}
			r, err := results.Load(out)
			if err != nil || r.Status != results.StatusInterrupted {
				t.Fatalf("results.json %v, status %q; want it finished as interrupted", err, r.Status)
			}
			if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
				t.Errorf("no report: %v", err)
			}
			clitest.NoServerLeft(t, path)
		})
	}
}
