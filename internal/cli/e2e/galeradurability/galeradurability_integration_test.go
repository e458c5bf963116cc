//go:build integration

package galeradurability

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// TestDurabilityOnGalera: the power-loss audit on a 2-node cluster it
// builds itself (no lab: every node killed, the OS page cache kept), on a
// --path of 80 bytes, for two cycles (the recovery's sockets must not grow
// with --path: they did, and one a few bytes longer counted every commit
// of a cycle lost). The
// cluster is recovered as an operator would (each node's position,
// bootstrap from the most advanced, the others by IST or calibra's copy),
// and every node is checked, against the acknowledged commits and against
// node 1. Then Ctrl-C during a run on the cluster the audit built leaves no
// mariadbd and no node behind.
func TestDurabilityOnGalera(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	clitest.RequireGalera(t)
	path := testenv.LongPath(t, 80)
	dir := filepath.Join(t.TempDir(), "audit")
	// Two nodes: one bootstraps after the cut, the other rejoins, as on
	// three (TestGaleraCluster keeps three), for two thirds of the work.
	cluster := []string{"--engine", "mariadb", "--galera", "2", "--db-cache", "128MB", "--path", path}
	clitest.MustRun(t, 0, append([]string{"durability", "--progress", "none", "--cycles", "2", "--load", "2s", "--clients", "2", "--out", dir,
		"--threshold", "durability.lost_acknowledged == 0"}, cluster...)...)
	_, d := clitest.LastStep[*results.Durability](t, dir)
	if d.Cycles != 2 || d.Acknowledged == 0 || d.LostAcknowledged != 0 || d.UnverifiableAcknowledged != 0 {
		t.Fatalf("audit: %d cycles, %d acknowledged, %d missing, %d not verifiable: %s", d.Cycles, d.Acknowledged, d.LostAcknowledged, d.UnverifiableAcknowledged, d.Note)
	}
	for _, c := range d.PerCycle {
		if c.Outcome != "durable" && c.Outcome != "in-flight" || c.Consistency == nil || !c.Consistency.OK || len(c.Nodes) != 2 {
			t.Fatalf("audit cycle %d: outcome %s, consistency %+v, %d nodes checked (want 2)", c.Cycle, c.Outcome, c.Consistency, len(c.Nodes))
		}
		for _, n := range c.Nodes {
			if n.LostAcknowledged != 0 || !n.ConsistencyOK || n.Differs != "" {
				t.Errorf("cycle %d, node %d after the recovery: %+v", c.Cycle, n.Node, n)
			}
		}
	}
	clitest.NoServerLeft(t, path)

	code, _ := clitest.InterruptChild(t, "oltp run: 6 users", 2*time.Second, append([]string{"oltp", "run", "--users", "6", "--rampup", "1s",
		"--duration", "1m", "--rate-per-user", fmt.Sprint(oltptest.PacedRate), "--progress", "plain", "--out", filepath.Join(t.TempDir(), "cut")}, cluster...)...)
	if code != 130 {
		t.Errorf("Ctrl-C: exit %d, want 130", code)
	}
	clitest.NoServerLeft(t, path)
	clitest.MustRun(t, 0, "clean", "--path", path)
}
