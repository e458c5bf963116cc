package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestMain lets the test binary stand in for calibra when a test runs it as
// a child process (to send it real signals).
func TestMain(m *testing.M) {
	if os.Getenv("CALIBRA_TEST_AS_CALIBRA") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The lab runs this binary as its NBD server (calibra lab serve).
	os.Setenv("CALIBRA_TEST_AS_CALIBRA", "1")
	os.Exit(m.Run())
}

// run calls calibra in-process and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// requirePostgres skips a test when no PostgreSQL server is installed,
// saying how to install one, unless CI requires it.
func requirePostgres(t *testing.T) {
	t.Helper()
	if _, err := postgres.FindBinaries(""); err != nil {
		if testenv.Required("postgres") {
			t.Fatalf("PostgreSQL is required here: %v", err)
		}
		t.Skipf("no PostgreSQL server installed (apt-get install postgresql): %v", err)
	}
}

// requireEngine is requirePostgres or requireMariaDB, by --engine's name.
func requireEngine(t *testing.T, engine string) {
	t.Helper()
	if engine == "mariadb" {
		requireMariaDB(t)
		return
	}
	requirePostgres(t)
}

// storageDir makes a directory the unprivileged server account can reach:
// t.TempDir's parents are private to root.
func storageDir(t *testing.T) string { return testenv.StorageDir(t) }

// noServerLeft fails if a server still runs on the managed data directory.
func noServerLeft(t *testing.T, path string) {
	t.Helper()
	// A killed server may leave its postmaster.pid; what counts is whether
	// any process still works in the data directory.
	if pids := testenv.ProcessesUnder(path); len(pids) > 0 {
		t.Fatalf("a database server is still running under %s (pids %v)", path, pids)
	}
}

// interruptChild runs calibra (this test binary, see TestMain) as a child,
// sends it SIGINT after the given pause once a stderr line starts with
// ready, and returns its exit code and everything it wrote on stderr.
func interruptChild(t *testing.T, ready string, after time.Duration, args ...string) (int, string) {
	t.Helper()
	return signalChild(t, ready, after, []syscall.Signal{syscall.SIGINT}, args...)
}

// signalChild is interruptChild with the signals to send, 200 ms apart.
func signalChild(t *testing.T, ready string, after time.Duration, sigs []syscall.Signal, args ...string) (int, string) {
	t.Helper()
	cmd, lines, seen := startUntil(t, ready, args...)
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

// runIn runs calibra as a child process in dir (a test's working
// directory is the process's, which parallel tests share) and returns its
// exit code and stderr.
func runIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CALIBRA_TEST_AS_CALIBRA=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// startUntil starts calibra as a child process and reads its stderr up to
// the first line starting with ready (or its end); the child is killed at
// the end of the test.
func startUntil(t *testing.T, ready string, args ...string) (*exec.Cmd, *bufio.Scanner, []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CALIBRA_TEST_AS_CALIBRA=1")
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

// existingServer starts the managed instance under path by hand, as an
// existing server that calibra reaches only through --dsn, and returns a
// DSN maker for it (over its Unix socket: the instance has no TCP
// listener); it stops at the end of the test.
func existingServer(t *testing.T, path string) func(userinfo, db string) string {
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
	sock, port := target.Managed.SocketDir, target.Managed.Port
	return func(userinfo, db string) string {
		return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", userinfo, db, sock, port)
	}
}
