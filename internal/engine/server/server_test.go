package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server's last words: the last five lines, or the last five that say
// why when a filter is given and something matches it.
func TestTailKeepsTheLastWords(t *testing.T) {
	var tail Tail
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&tail, "note %d\n", i)
		if i == 2990 {
			fmt.Fprintln(&tail, "[ERROR] unknown variable 'bogus=1'")
		}
	}
	if got, want := tail.String(), "note 2996 | note 2997 | note 2998 | note 2999 | note 3000"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	isError := func(l string) bool { return l == "[ERROR] unknown variable 'bogus=1'" }
	if got := tail.Matching(isError); got != "[ERROR] unknown variable 'bogus=1'" {
		t.Errorf("Matching = %q, want the error line alone", got)
	}
	if got := tail.Matching(func(string) bool { return false }); got != tail.String() {
		t.Errorf("Matching nothing = %q, want the last lines", got)
	}
	// Of many matching lines, the first (the cause) and the last four.
	if got, want := tail.Matching(func(l string) bool { return strings.HasPrefix(l, "note 29") }),
		"note 2900 | note 2996 | note 2997 | note 2998 | note 2999"; got != want {
		t.Errorf("Matching many = %q, want %q", got, want)
	}
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		in, sep, want string
		n             int
	}{
		{"a\nb\nc\n", "\n", "b\nc", 2},
		{"a\nb\nc", " | ", "a | b | c", 5},
		{"only\n", " | ", "only", 1},
	}
	for _, c := range cases {
		if got := LastLines(c.in, c.n, c.sep); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestSamePathResolvesLinks(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if !SamePath(link, dir) || SamePath(dir, t.TempDir()) || SamePath(dir, filepath.Join(dir, "missing")) {
		t.Error("SamePath: a link must match its target, and nothing else")
	}
}

// Only a process of the engine's name working in the data directory is the
// server a pid file names: a reused PID is someone else's.
func TestPIDInOwnsOnlyItsDataDirectory(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "60")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	if err := os.WriteFile(pidFile, []byte(fmt.Sprintf("%d\n%s\n", cmd.Process.Pid, dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		dataDir string
		comms   []string
		want    bool
	}{
		{"the server", dir, []string{"postgres", "sleep"}, true},
		{"another directory", t.TempDir(), []string{"sleep"}, false},
		{"another program", dir, []string{"mariadbd"}, false},
	} {
		if pid, ok := PIDIn(pidFile, c.dataDir, c.comms...); ok != c.want || (ok && pid != cmd.Process.Pid) {
			t.Errorf("%s: PIDIn = %d, %v; want %v", c.name, pid, ok, c.want)
		}
	}
	if _, ok := PIDIn(filepath.Join(dir, "missing.pid"), dir, "sleep"); ok {
		t.Error("a missing pid file names a server")
	}
	StopLeftover(cmd.Process.Pid, syscall.SIGTERM, time.Second, func() bool {
		_, ok := PIDIn(pidFile, dir, "sleep")
		return ok
	})
	if err := cmd.Wait(); err == nil {
		t.Error("the leftover was not stopped")
	}
}

// The socket base's parent: TMPDIR when a server's socket beneath it stays
// within 107 bytes, else root's /run, as with no TMPDIR.
func TestALongTMPDIRIsPassedOverForSockets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the fallback for root is /run; run as root")
	}
	fits := "/" + strings.Repeat("t", SocketParentMax()-1)
	cases := []struct{ tmpdir, want string }{
		{"", "/run"},
		{"/var/tmp", "/var/tmp"},
		{fits, fits},
		{fits + "t", "/run"},
	}
	for _, c := range cases {
		t.Setenv("TMPDIR", c.tmpdir)
		if got := socketParent(); got != c.want {
			t.Errorf("TMPDIR %q (%d bytes): sockets under %s, want %s", c.tmpdir, len(c.tmpdir), got, c.want)
		}
	}
}
