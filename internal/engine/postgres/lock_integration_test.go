package postgres

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAnotherAccountCannotLogIn starts a managed instance and tries to log
// in to it as another local account: over TCP on loopback (there must be no
// listener) and over the Unix socket, even with the socket's directory
// opened to everyone (peer authentication must refuse the account).
func TestAnotherAccountCannotLogIn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("logging in as another local account needs root to switch accounts")
	}
	stranger, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no 'nobody' account to play the other local user: %v", err)
	}
	uid, _ := strconv.Atoi(stranger.Uid)
	gid, _ := strconv.Atoi(stranger.Gid)

	// Start connects as calibra's own account: that must still work.
	target, _ := startManaged(t)
	in := target.Managed
	bin := in.cfg.Bin

	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", in.Port), time.Second); err == nil {
		c.Close()
		t.Errorf("the managed instance listens on 127.0.0.1:%d: any local account can reach it", in.Port)
	}

	login := func() (string, error) {
		cmd := exec.Command(bin.Path("psql"), "-h", in.SocketDir, "-p", strconv.Itoa(in.Port),
			"-U", Superuser, "-d", "postgres", "-w", "-Atc", "SELECT 'in as ' || current_user")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
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
