//go:build integration

package observemy

import (
	"context"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// A Galera cluster's window has each node's replication counters: the
// write sets node 1 replicated, and a conflict between the nodes counted
// where it happened.
func TestSamplerOnGalera(t *testing.T) {
	_, missing := mariadb.FindBinaries("")
	testenv.Need(t, "mariadb", missing, "apt-get install mariadb-server")
	_, missing = mariadb.FindProvider()
	if _, err := osexec.LookPath("rsync"); err != nil && missing == nil {
		missing = err
	}
	testenv.Need(t, "galera", missing, "apt-get install galera-4 rsync")
	c, err := mariadb.PrepareCluster(context.Background(), mariadb.TargetConfig{Path: testenv.StorageDir(t), DBCache: "32MB", Galera: 2})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Start(t, c)
	ctx := context.Background()
	n1, n2 := c.Nodes()[0].DB(), c.Nodes()[1].DB()
	defer n1.Close()
	defer n2.Close()
	exec1 := func(q string) {
		t.Helper()
		if _, err := n1.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec1("CREATE TABLE k (i int PRIMARY KEY, v int)")
	exec1("INSERT INTO k VALUES (1, 0)")
	s, err := observe.Start(ctx, observe.Config{Path: c.Nodes()[0].Managed.DataDir, Engine: c.Nodes()[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	from := s.Edge()
	for range 10 {
		exec1("UPDATE k SET v = v + 1 WHERE i = 1")
	}
	// Node 1's open transaction loses to node 2's committed write.
	conn, err := n1.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.ExecContext(ctx, "BEGIN")
	_, _ = conn.ExecContext(ctx, "UPDATE k SET v = v + 100 WHERE i = 1")
	if _, err := n2.ExecContext(ctx, "UPDATE k SET v = v + 1000 WHERE i = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err == nil {
		t.Error("node 1's conflicting transaction committed")
	}
	// The node may count the abort a moment after the client hears of it.
	var w *results.Observe
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		w = s.Window(from, s.Edge())
		if w.DB == nil || len(w.DB.Nodes) != 2 {
			t.Fatalf("the window has no per-node counters: %+v (missing %v)", w.DB, w.Missing)
		}
		if n := w.DB.Nodes[0]; deref(n.CertFailures)+deref(n.BFAborts) > 0 || time.Now().After(deadline) {
			break
		}
	}
	one, two := w.DB.Nodes[0], w.DB.Nodes[1]
	if deref(one.Replicated) < 10 {
		t.Errorf("node 1 replicated %d write sets, want at least the 10 updates", deref(one.Replicated))
	}
	if deref(two.Replicated) < 1 {
		t.Errorf("node 2 replicated %d write sets, want its update", deref(two.Replicated))
	}
	lost := int64(0)
	if one.CertFailures != nil && one.BFAborts != nil {
		lost = *one.CertFailures + *one.BFAborts
	}
	// The race may also abort it twice: applied over, then failing
	// certification at its commit.
	if lost < 1 {
		t.Errorf("node 1 counts %d certification failures and %d brute-force aborts, want the conflict", deref(one.CertFailures), deref(one.BFAborts))
	}
	if one.FlowControlPausedPct == nil || *one.FlowControlPausedPct < 0 || one.FlowControlSent == nil {
		t.Errorf("node 1's flow control is not read: %+v", one)
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
