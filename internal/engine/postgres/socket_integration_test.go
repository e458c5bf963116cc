//go:build integration

package postgres

import (
	"context"
	"testing"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// A TMPDIR and a --path deep in a user's tree: PostgreSQL refused to start
// once its socket's path passed 107 bytes ("could not create any
// Unix-domain sockets"), and calibra exited 1 with those words. Start
// returns once the server accepts connections on its socket.
func TestALongTMPDIRAndPathStart(t *testing.T) {
	_, missing := FindBinaries("")
	testenv.Need(t, "postgresql", missing, "apt-get install postgresql")
	testenv.LongSocketPaths(t, func(t *testing.T, path string) string {
		target, err := Prepare(context.Background(), TargetConfig{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		testenv.Start(t, target)
		return target.Managed.SocketDir
	})
}
