package proc_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/testenv"
)

var fio = proc.Tool{Name: "fio", Flag: "--fio", What: "fio", Version: regexp.MustCompile(`^fio-(\d+)`), MinMajor: 3, Hint: "install fio"}

// A program another account could change is refused in one sentence
// naming the flag (or PATH), before it runs even for --version.
func TestToolFindRefusesAnotherAccountsProgram(t *testing.T) {
	for _, trap := range testenv.Traps(t, "fio", "fio-3.33") {
		t.Run(trap.Case, func(t *testing.T) {
			_, _, err := fio.Find(t.Context(), trap.Path)
			refused(t, err, "--fio "+trap.Path+": ")
			if trap.Ran() {
				t.Error("the program ran")
			}
		})
		t.Run(trap.Case+", on PATH", func(t *testing.T) {
			t.Setenv("PATH", filepath.Dir(trap.Path))
			_, _, err := fio.Find(t.Context(), "")
			refused(t, err, "fio on PATH: ")
			if trap.Ran() {
				t.Error("the program ran")
			}
		})
	}
}

// The user's own program, and root's, run as before.
func TestToolFindRunsTheUsersOwnProgram(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fio")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho fio-3.33\n"), 0o755); err != nil { // safefs: in t.TempDir, the test's own
		t.Fatal(err)
	}
	got, version, err := fio.Find(t.Context(), path)
	if err != nil || got != path || version != "fio-3.33" {
		t.Fatalf("Find(%s) = %s, %q, %v; want the program itself and its version", path, got, version, err)
	}
}

func refused(t *testing.T, err error, prefix string) {
	t.Helper()
	if fault.Code(err) != fault.ExitInput || !strings.HasPrefix(err.Error(), prefix) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v; want one sentence starting %q", err, prefix)
	}
}
