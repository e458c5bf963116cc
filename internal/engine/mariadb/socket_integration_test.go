//go:build integration

package mariadb

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// A TMPDIR and a --path deep in a user's tree: the server's socket path
// (at most 107 bytes) must not grow with them. Start returns once the
// server accepts connections on its socket.
func TestALongTMPDIRAndPathStart(t *testing.T) {
	testenv.LongSocketPaths(t, func(t *testing.T, path string) string {
		target, _ := startManaged(t, TargetConfig{Path: path})
		return target.Managed.SocketDir
	})
}
