package safefs

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// A socket ListenUnix makes is 0600 from the start, answers at its path,
// refuses a path taken, and goes away when closed.
func TestListenUnix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "serve.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want a socket with mode 0600", path, st.Mode())
	}
	if ln.Addr().String() != path {
		t.Errorf("Addr() = %s, want %s", ln.Addr(), path)
	}
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("connect to the socket at its path: %v", err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if line != "hello\n" {
		t.Errorf("read %q through the socket", line)
	}
	if _, err := ListenUnix(path); err == nil || !strings.Contains(err.Error(), "already exists") || fault.Code(err) != fault.ExitInput {
		t.Errorf("a second socket at the same path: %v", err)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after Close: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind in the directory: %v", entries)
	}
}

// A directory other accounts can write, and a path too long for a
// socket, are refused in one sentence.
func TestListenUnixRefuses(t *testing.T) {
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 120))
	for path, want := range map[string]string{
		filepath.Join(shared, "s.sock"): "writable by other accounts",
		long:                            "over the 107 a Unix socket allows",
	} {
		_, err := ListenUnix(path)
		if err == nil || !strings.Contains(err.Error(), want) || fault.Code(err) != fault.ExitInput {
			t.Errorf("ListenUnix(%s): %v, want %q", path, err, want)
		}
	}
}
