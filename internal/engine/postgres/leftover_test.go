package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The SIGKILL window (issue 36): right after a killed calibra, its
// postmaster is still shutting down on its parent-death signal. A start
// finds it by its postmaster.pid and waits for it to go (here a second
// later) rather than advise clean; server's tests hold the refusal of one
// that stays.
func TestAStartWaitsForAServerStillExiting(t *testing.T) {
	path := t.TempDir()
	dataDir := filepath.Join(path, DataDirName)
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	in := &Instance{cfg: InstanceConfig{Path: path}, DataDir: dataDir}
	pid := testenv.FakeServer(t, "postgres", dataDir, "1")
	if err := os.WriteFile(filepath.Join(dataDir, "postmaster.pid"), []byte(strconv.Itoa(pid)+"\n"+dataDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := in.runningPID(); !ok || got != pid {
		t.Fatalf("the fake postmaster (pid %d) is not found: %d %v", pid, got, ok)
	}
	if err := server.AwaitLeftover(context.Background(), "PostgreSQL", path, dataDir, in.runningPID); err != nil {
		t.Fatalf("a server that exits a second later: %v", err)
	}
}
