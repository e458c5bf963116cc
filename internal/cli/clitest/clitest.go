// Package clitest drives calibra's command line in tests: in-process
// (Run), as a child process of the test binary (RunIn, StartUntil,
// InterruptChild, SignalChild), and the checks and skips the end-to-end
// tests share (RequirePostgres, MustRun, LastStep, CheckRun, ...). It is
// used by internal/cli's own tests and by the end-to-end packages under
// internal/cli/e2e, so that each runs beside the others.
//
// clitest does not import internal/cli (internal/cli's tests, in package
// cli, could not import it then): each test package hands it calibra's
// entry point from its TestMain, clitest.Main(m, cli.Main).
package clitest

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// asCalibra makes the test binary run as calibra (see Main).
const asCalibra = "CALIBRA_TEST_AS_CALIBRA"

// calibra is cli.Main, as Main was given it.
var calibra func(args []string, stdout, stderr io.Writer) int

// Main is a test package's TestMain: it lets the test binary stand in for
// calibra (cli.Main, given as calibra) when a test runs it as a child
// process (to send it real signals, or to run it in another directory),
// and otherwise runs the tests.
func Main(m *testing.M, main func(args []string, stdout, stderr io.Writer) int) {
	calibra = main
	// Tests record no run in the default results store (for root,
	// /var/lib/calibra): a test that proves recording names its own file.
	if _, ok := os.LookupEnv("CALIBRA_STORE"); !ok {
		os.Setenv("CALIBRA_STORE", "none")
	}
	if path := os.Getenv(holdStore); path != "" {
		os.Exit(holdWriteLock(path))
	}
	if os.Getenv(asCalibra) == "1" {
		os.Exit(main(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The lab runs this binary as its NBD server (calibra lab serve).
	os.Setenv(asCalibra, "1")
	flag.Parse()
	standIns := ""
	if testing.Short() {
		standIns = standInTools()
	}
	code := m.Run()
	if standIns != "" {
		os.RemoveAll(standIns) // safefs: the test's own MkdirTemp
	}
	os.Exit(code)
}

// standInTools puts programs that answer --version as fio and
// tpchgen-cli do first on PATH where those tools are missing: under
// -short no test runs them (RequireFio skips), but commands check them
// while they plan, and a machine without them would add a sentence to
// every refusal the bad-input matrix reads.
func standInTools() (dir string) {
	for tool, version := range map[string]string{"fio": "fio-3.33", "tpchgen-cli": "tpchgen-cli 2.0.1"} {
		if _, err := exec.LookPath(tool); err == nil {
			continue
		}
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "calibra-stand-ins-"); err != nil {
				return ""
			}
			os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		script := "#!/bin/sh\n[ \"$1\" = --version ] && echo '" + version + "' && exit 0\necho '" + tool + ": a stand-in for -short tests' >&2\nexit 1\n"
		_ = os.WriteFile(filepath.Join(dir, tool), []byte(script), 0o755) // safefs: in a MkdirTemp of the test's own
	}
	return dir
}

// Run calls calibra in-process and returns its exit code, stdout and
// stderr.
func Run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	if calibra == nil {
		t.Fatal("clitest.Run: the package's TestMain must call clitest.Main(m, cli.Main)")
	}
	var out, errb bytes.Buffer
	code := calibra(args, &out, &errb)
	return code, out.String(), errb.String()
}

// RunTimed is Run with each line calibra writes to stderr prefixed by the
// seconds since it started, so a test's log shows where a slow run spent
// its time.
func RunTimed(t *testing.T, args ...string) (int, string) {
	t.Helper()
	if calibra == nil {
		t.Fatal("clitest.RunTimed: the package's TestMain must call clitest.Main(m, cli.Main)")
	}
	w := &timedLines{start: time.Now()}
	code := calibra(args, io.Discard, w)
	return code, w.b.String()
}

// timedLines prefixes each line written to it with the seconds since start.
type timedLines struct {
	start time.Time
	b     bytes.Buffer
	mid   bool // within a line
}

func (w *timedLines) Write(p []byte) (int, error) {
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !w.mid {
			fmt.Fprintf(&w.b, "%6.1fs ", time.Since(w.start).Seconds())
		}
		w.b.Write(line)
		w.mid = line[len(line)-1] != '\n'
	}
	return len(p), nil
}

// MustRun runs calibra in-process and fails unless it exits with want; it
// returns calibra's stderr.
func MustRun(t *testing.T, want int, args ...string) string {
	t.Helper()
	start := time.Now()
	code, _, stderr := Run(t, args...)
	t.Logf("calibra %s: exit %d after %.1f s", args[0], code, time.Since(start).Seconds())
	if code != want {
		t.Fatalf("calibra %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, stderr)
	}
	return stderr
}

// LastStep loads the run directory out and returns its last step and that
// step's body, failing unless it is a T.
func LastStep[T any](t *testing.T, out string) (results.Step, T) {
	t.Helper()
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Steps) == 0 {
		t.Fatalf("%s has no step", out)
	}
	st := r.Steps[len(r.Steps)-1]
	body, ok := st.Body.(T)
	if !ok {
		t.Fatalf("the last step is %T, want %T", st.Body, body)
	}
	return st, body
}

// StorageDir makes a directory the unprivileged server account can reach:
// t.TempDir's parents are private to root.
func StorageDir(t *testing.T) string { return testenv.StorageDir(t) }

// Dirs are a test's storage path (StorageDir) and its runs' directories:
// out(name) is the run directory name, under a temporary directory.
func Dirs(t *testing.T) (path string, out func(name string) string) {
	t.Helper()
	path, outs := StorageDir(t), t.TempDir()
	return path, func(name string) string { return filepath.Join(outs, name) }
}

// NoServerLeft fails if a server still runs on the managed data directory.
func NoServerLeft(t *testing.T, path string) {
	t.Helper()
	// A killed server may leave its postmaster.pid; what counts is whether
	// any process still works in the data directory.
	if pids := testenv.ProcessesUnder(path); len(pids) > 0 {
		t.Fatalf("a database server is still running under %s (pids %v)", path, pids)
	}
}

// InterruptChild runs calibra (the test binary, see Main) as a child,
// sends it SIGINT after the given pause once a stderr line starts with
// ready, and returns its exit code and everything it wrote on stderr.
func InterruptChild(t *testing.T, ready string, after time.Duration, args ...string) (int, string) {
	t.Helper()
	return SignalChild(t, ready, after, []syscall.Signal{syscall.SIGINT}, args...)
}

// SignalChild is InterruptChild with the signals to send, 200 ms apart.
func SignalChild(t *testing.T, ready string, after time.Duration, sigs []syscall.Signal, args ...string) (int, string) {
	t.Helper()
	cmd, lines, seen := StartUntil(t, ready, args...)
	time.Sleep(after)
	for i, sig := range sigs {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, strings.Join(seen, "\n")
}

// Command is calibra as a child process: the test binary, told to stand in
// for it (Main).
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCalibra+"=1")
	return cmd
}

// RunIn runs calibra as a child process in dir (a test's working
// directory is the process's, which parallel tests share) and returns its
// exit code and stderr.
func RunIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := Command(args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// StartUntil starts calibra as a child process and reads its stderr up to
// the first line starting with ready (or its end); the child is killed at
// the end of the test.
func StartUntil(t *testing.T, ready string, args ...string) (*exec.Cmd, *bufio.Scanner, []string) {
	t.Helper()
	cmd := Command(args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.HasPrefix(lines.Text(), ready) {
			break
		}
	}
	return cmd, lines, seen
}
