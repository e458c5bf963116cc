package mariadb

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The SIGKILL window (issue 36): a start finds a mariadbd a killed calibra
// left shutting down by its pid file and waits for it to go (here a
// second later) instead of advising clean; server's tests hold the
// refusal of one that stays.
func TestAStartWaitsForAServerStillExiting(t *testing.T) {
	path := t.TempDir()
	in := &Instance{cfg: InstanceConfig{Path: path}, DataDir: filepath.Join(path, DataDirName)}
	if err := os.Mkdir(in.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	pid := testenv.FakeServer(t, "mariadbd", in.DataDir, "1")
	if err := os.WriteFile(in.pidFile(), []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := in.runningPID(); !ok || got != pid {
		t.Fatalf("the fake mariadbd (pid %d) is not found: %d %v", pid, got, ok)
	}
	if err := server.AwaitLeftover(context.Background(), "MariaDB", path, in.DataDir, in.runningPID); err != nil {
		t.Fatalf("a server that exits a second later: %v", err)
	}
}
