package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/fault"
)

// Issue 51, inputs: every file calibra reads that it did not write goes
// through one bounded reader. Standard input without end, a FIFO, a 0600
// file that is no input of calibra's and the environment in /proc are
// refused at once in one sentence, and nothing of theirs is printed.

// child is calibra run as a child process, its exit and what it printed.
type child struct {
	code           int
	stdout, stderr string
	maxRSS         int64 // bytes
}

// runChild runs calibra as a child process with stdin (nil: none) and
// extra environment; a minute is a hang guard (an unbounded read or a
// blocked open), not a duration the test expects.
func runChild(t *testing.T, stdin *os.File, env []string, args ...string) child {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := clitest.Command(args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("calibra %s did not end within a minute:\n%s", strings.Join(args, " "), errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	c := child{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.maxRSS = ru.Maxrss << 10
	}
	return c
}

// oneSentence fails the test unless c is exit 2 with one line naming what.
func (c child) oneSentence(t *testing.T, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(c.stderr), "\n")
	if c.code != fault.ExitInput || len(lines) != 1 || !strings.HasPrefix(lines[0], "calibra: ") || !strings.Contains(lines[0], what) {
		t.Errorf("exit %d, want %d with one sentence saying %q:\n%s", c.code, fault.ExitInput, what, c.stderr)
	}
}

// Medium: --study /dev/stdin < /dev/zero read 19.5 GB in 20 s until the
// kernel's OOM killer ended it. Standard input has a study's bound.
func TestAStudyOnEndlessStandardInputEndsAtTheBound(t *testing.T) {
	for _, name := range []string{"/dev/stdin", "-"} {
		t.Run(name, func(t *testing.T) {
			zero, err := os.Open("/dev/zero")
			if err != nil {
				t.Fatal(err)
			}
			defer zero.Close()
			c := runChild(t, zero, nil, "plan", "--study", name)
			c.oneSentence(t, "larger than the 4 MiB calibra reads as a study")
			if c.maxRSS > 200<<20 {
				t.Errorf("calibra grew to %d MiB reading endless zeros", c.maxRSS>>20)
			}
		})
	}
}

// Medium: a FIFO given as --study, --dsn-file or --store-file blocked in
// open(), deaf to the first two signals. It is refused at once.
func TestAFIFOIsRefusedAsEveryInputFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"--study":      {"plan", "--study", fifo},
		"--dsn-file":   {"oltp", "run", "--dsn-file", fifo},
		"--store-file": {"history", "--store-file", fifo},
	} {
		t.Run(name, func(t *testing.T) {
			runChild(t, nil, nil, args...).oneSentence(t, fifo+" is not a regular file")
		})
	}
}

// Medium: --study, --dsn-file and --store-file given a 0600 file of root's
// printed its lines; --store-file /proc/self/environ the environment. A
// file that is no input of calibra's is refused and never quoted.
func TestNoInputFileIsQuoted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"lines": "SECRET-MARKER-1\npassword: SECRET-MARKER-2\n",
		"token": "SECRET-MARKER-TOKEN\n",
		"yaml":  "SECRET-MARKER-KEY: 1\nversion: SECRET-MARKER-VERSION\n",
		"dsn":   "postgres://calibra:SECRET-MARKER-PW@db.invalid/bench?x=y\nSECRET-MARKER-3\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil { // safefs: the test's own TempDir
			t.Fatal(err)
		}
	}
	env := []string{"CALIBRA_TEST_ENV_MARKER=SECRET-MARKER-ENV"}
	for name := range files {
		f := filepath.Join(dir, name)
		for _, args := range [][]string{
			{"plan", "--study", f},
			{"oltp", "run", "--dsn-file", f},
			{"history", "--store-file", f},
		} {
			t.Run(name+" "+args[len(args)-2], func(t *testing.T) {
				c := runChild(t, nil, env, args...)
				if c.code != fault.ExitInput || strings.Contains(c.stdout+c.stderr, "SECRET-MARKER") {
					t.Errorf("exit %d, want %d quoting nothing of %s:\n%s%s", c.code, fault.ExitInput, f, c.stdout, c.stderr)
				}
			})
		}
	}
	t.Run("--store-file /proc/self/environ", func(t *testing.T) {
		c := runChild(t, nil, env, "history", "--store-file", "/proc/self/environ")
		c.oneSentence(t, "/proc/self/environ is a kernel file")
		if strings.Contains(c.stdout+c.stderr, "SECRET-MARKER") {
			t.Errorf("the environment was printed:\n%s%s", c.stdout, c.stderr)
		}
	})
}

// Medium: SIGTERM did not stop a read of standard input. The first
// SIGINT or SIGTERM ends a command waiting for a study on a pipe no one
// writes.
func TestTheFirstSignalEndsAWaitForStandardInput(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close() // open, silent, until the end
			cmd := clitest.Command("plan", "--study", "/dev/stdin")
			cmd.Stdin = r
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			time.Sleep(500 * time.Millisecond) // into the read (a later signal must end it too)
			_ = cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang guard, not a duration
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("one %v did not end calibra waiting for its study:\n%s", sig, errb.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != fault.ExitInterrupted {
				t.Errorf("exit %d after %v, want %d:\n%s", code, sig, fault.ExitInterrupted, errb.String())
			}
		})
	}
}
