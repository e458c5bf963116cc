//go:build integration

package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/results"
)

// A disk that fills in the middle of the window is a failed run (exit 1)
// whose cause is said in one sentence, with what was measured kept; it
// was reported as complete, with 75,727 failed transactions.
func TestAFullDiskFailsTheRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	// Room for the build and the free-space checks (1 GiB spare), no more.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1800m,mode=755", "tmpfs", path).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small file system here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", path).Run() })
	runs := t.TempDir()
	clitest.MustRun(t, 0, "oltp", "build", "--warehouses", "1", "--path", path, "--progress", "none", "--out", filepath.Join(runs, "build"))

	out := filepath.Join(runs, "full")
	type outcome struct {
		code   int
		stderr string
	}
	done := make(chan outcome, 1)
	go func() {
		// Paced: each New-Order still extends the tables within the second.
		code, _, stderr := clitest.Run(t, "oltp", "run", "--users", "4", "--rampup", "0s", "--duration", "90s",
			oltptest.PacedFlag, "--path", path, "--progress", "none", "--out", out)
		done <- outcome{code, stderr}
	}()
	time.Sleep(5 * time.Second)
	filler := filepath.Join(path, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	// Take every block left, in ever smaller pieces.
	for off, chunk := int64(0), int64(256<<20); chunk >= 4096; {
		if unix.Fallocate(int(f.Fd()), 0, off, chunk) == nil {
			off += chunk
		} else {
			chunk /= 2
		}
	}
	f.Close()
	// Once the server has met the full disk, give the space back so that
	// its shutdown checkpoint can be written.
	for i := 0; ; i++ {
		log, _ := os.ReadFile(filepath.Join(out, "logs", "server.log"))
		if strings.Contains(string(log), "No space left on device") {
			break
		}
		if i == 600 {
			t.Fatal("the server never met the full disk")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	os.Remove(filler)

	res := <-done
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.code != 1 || r.Status != results.StatusFailed {
		t.Fatalf("a full disk mid-window: exit %d, status %s, want 1 and failed\n%s", res.code, r.Status, res.stderr)
	}
	if !strings.Contains(res.stderr, "the disk under the database is full") && !strings.Contains(res.stderr, "the server stopped") &&
		!strings.Contains(res.stderr, "the connection to the server was lost") {
		t.Errorf("the cause is not said:\n%s", res.stderr)
	}
	if len(r.Steps) != 1 || r.Steps[0].Status != results.StatusFailed {
		t.Fatalf("steps %+v, want the one oltp step, failed and kept", r.Steps)
	}
}
