package proc_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/proc"
)

// A program's version is asked once per file: asked again, the answer is
// the remembered one; once the program is replaced (an upgrade), or asked
// with other arguments, it runs again; a failure is never remembered.
func TestVersionOutputAsksEachProgramFileOnce(t *testing.T) {
	dir := t.TempDir()
	prog, runs := filepath.Join(dir, "tool"), filepath.Join(dir, "runs")
	write := func(body string) {
		t.Helper()
		// A new file, as an upgrade installs one (and the old one may stay
		// open elsewhere).
		tmp := prog + ".new"
		if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho run >>"+runs+"\n"+body+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, prog); err != nil {
			t.Fatal(err)
		}
	}
	ran := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run\n")
	}
	ask := func(args ...string) (string, error) {
		out, err := proc.VersionOutput(exec.Command(prog, args...))
		return string(out), err
	}

	write("echo tool-1.0")
	for _, step := range []struct {
		name, args, want string
		runs             int
	}{
		{"first ask", "--version", "tool-1.0\n", 1},
		{"asked again", "--version", "tool-1.0\n", 1},
		{"other arguments", "-V", "tool-1.0\n", 2},
	} {
		if got, err := ask(step.args); err != nil || got != step.want || ran() != step.runs {
			t.Fatalf("%s: %q, %v after %d runs; want %q after %d", step.name, got, err, ran(), step.want, step.runs)
		}
	}

	write("echo tool-2.0")
	if got, err := ask("--version"); err != nil || got != "tool-2.0\n" || ran() != 3 {
		t.Fatalf("after an upgrade: %q, %v after %d runs; want the new version from a third run", got, err, ran())
	}

	write("echo broken; exit 1")
	for i := 1; i <= 2; i++ {
		if _, err := ask("--version"); err == nil || ran() != 3+i {
			t.Fatalf("a failing program, asked %d times: error %v after %d runs; want an error from each run", i, err, ran())
		}
	}
}
