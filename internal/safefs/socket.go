package safefs

import (
	"errors"
	"net"
	"os"
	"path/filepath"

	"github.com/calibra-bench/calibra/internal/fault"
	"golang.org/x/sys/unix"
)

// MaxSocketPath is the longest path a Unix socket can be bound at
// (sun_path holds 108 bytes with its NUL).
const MaxSocketPath = 107

// ListenUnix listens on a new Unix socket at path, mode 0600, in a
// directory that passes CheckDir. The socket is made in a private (0700)
// directory beside path and, once 0600, linked to path, so no other
// account can connect in between, whatever the umask; an existing path is
// refused. Closing the listener removes path.
func ListenUnix(path string) (net.Listener, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	taken := func() error {
		return fault.Input("remove it (a calibra serve that was killed leaves its socket) or choose another path", "%s already exists", abs)
	}
	if len(abs) > MaxSocketPath {
		return nil, fault.Input("choose a shorter path", "the socket path %s is %d bytes long, over the %d a Unix socket allows", abs, len(abs), MaxSocketPath)
	}
	dir := filepath.Dir(abs)
	if err := CheckDir(dir, "give --socket a path in a directory only calibra's account (or root) can change"); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(abs); !errors.Is(err, os.ErrNotExist) {
		return nil, taken()
	}
	tmp, err := os.MkdirTemp(dir, ".s") // 0700, a random name
	if err != nil {
		return nil, fault.Input("choose a directory calibra's account can write to", "cannot make the socket in %s: %v", dir, unwrap(err))
	}
	defer os.RemoveAll(tmp)
	bound := filepath.Join(tmp, "s")
	if len(bound) > MaxSocketPath {
		return nil, fault.Input("choose a shorter path", "the socket path %s leaves no room for the private name it is made at first (%d bytes at most)", abs, MaxSocketPath-len(bound)+len(abs))
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // the bound name goes with tmp; path is removed by Close
	if err := os.Chmod(bound, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := unix.Link(bound, abs); err != nil {
		ln.Close()
		if errors.Is(err, unix.EEXIST) {
			return nil, taken()
		}
		return nil, &os.LinkError{Op: "link", Old: bound, New: abs, Err: err}
	}
	return &unixListener{UnixListener: ln, path: abs}, nil
}

// unixListener removes its socket's path when closed.
type unixListener struct {
	*net.UnixListener
	path string
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	if rmErr := os.Remove(l.path); err == nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = rmErr
	}
	return err
}

// Addr is the socket's path, not the private name it was bound at.
func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }
