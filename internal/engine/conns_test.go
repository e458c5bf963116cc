package engine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// A connection that failed is one cause in a few words, with what to
// check, and never the password.
func TestUnreachableNamesTheCauseOnce(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		err                 error
		socketDir, why, fix string
	}{
		{errors.Join(refused, refused), "", "nothing listens there (connection refused)", "check the host and port in --dsn and that the server is running"},
		{&net.DNSError{Name: "db.invalid", IsNotFound: true}, "", "the host name db.invalid is not known", "check the host name in --dsn"},
		{fmt.Errorf("dial: %w", syscall.ENOENT), "/run/pg", "no server socket is in /run/pg", "check the socket directory (host) and port in --dsn and that the server is running"},
		{fmt.Errorf("connect: %w", errors.New("server said hunter2 is wrong\nand more")), "", "server said xxxxx is wrong", "check the host and port in --dsn and that the server is running"},
	} {
		why, fix := Unreachable(c.err, "hunter2", c.socketDir)
		if why != c.why || fix != c.fix {
			t.Errorf("%v: %q, %q; want %q, %q", c.err, why, fix, c.why, c.fix)
		}
	}
}
