//go:build integration

package postgres

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestAnotherAccountCannotLogIn starts a managed instance and tries to log
// in to it as another local account: over TCP on loopback (there must be no
// listener) and over the Unix socket, even with the socket's directory
// opened to everyone (peer authentication must refuse the account).
func TestAnotherAccountCannotLogIn(t *testing.T) {
	t.Parallel()
	uid, gid := testenv.Stranger(t)

	// Start connects as calibra's own account: that must still work.
	target, _ := startManaged(t)
	in := target.Managed
	bin := in.cfg.Bin

	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", in.Port), time.Second); err == nil {
		c.Close()
		t.Errorf("the managed instance listens on 127.0.0.1:%d: any local account can reach it", in.Port)
	}

	login := func() (string, error) { return loginAs(uid, gid, bin, in.SocketDir, in.Port, "dbname=postgres") }
	if out, err := login(); err == nil {
		t.Errorf("the account nobody logged in through the socket: %s", out)
	}
	// Past the private directory, authentication itself must refuse.
	if err := os.Chmod(in.SocketDir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := login()
	if err == nil {
		t.Errorf("the account nobody logged in through an open socket directory: %s", out)
	} else if !strings.Contains(out, "authentication failed") {
		t.Errorf("the account nobody was refused for another reason than authentication: %s", out)
	}
}

// loginAs runs psql as the account uid:gid on the server at the socket
// directory and port, with conn's further connection settings (the
// database, or replication=true), and returns what it printed.
func loginAs(uid, gid int, bin Binaries, sock string, port int, conn string) (string, error) {
	cmd := bin.Command("psql", "-w", "-Atc", "SELECT 'in as ' || current_user",
		fmt.Sprintf("host=%s port=%d user=%s %s", sock, port, Superuser, conn))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
