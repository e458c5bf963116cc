package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
)

// A Ctrl-C at the terminal goes to the whole foreground process group.
// While calibra probes the server binaries (postgres --version) it must
// reach calibra's handler alone: the probe, in its own group, finishes, and
// the run ends interrupted (130), not as a broken installation (2).
func TestCtrlCDuringAProbeIsAnInterruption(t *testing.T) {
	t.Parallel()
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	bin := filepath.Join(path, "bin")
	probing := filepath.Join(path, "probing")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A server whose --version takes a moment, long enough for the signal.
	scripts := map[string]string{
		"postgres": "#!/bin/sh\ntouch " + probing + "\nsleep 1\necho 'postgres (PostgreSQL) 15.18'\n",
		"initdb":   "#!/bin/sh\nexit 1\n",
	}
	for name, text := range scripts {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := clitest.Command("oltp", "check", "--path", path, "--pg-bin", bin, "--progress", "none", "--out", filepath.Join(path, "run"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's foreground job
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(probing); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the probe never ran:\n%s", stderr.String())
		}
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 || strings.Contains(stderr.String(), "--version failed") {
		t.Fatalf("Ctrl-C during the probe: exit %d, want 130\n%s", code, stderr.String())
	}
}
