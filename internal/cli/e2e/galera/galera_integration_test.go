//go:build integration

package galera

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// nodes is the cluster's size here: two carry every path of the command
// line that three do (TestGaleraCluster keeps three), for two thirds of
// the work.
const nodes = 2

// The Galera layer from the command line, on one 2-node cluster and one
// build, on a --path of 80 bytes: the TPC-C-like layer built once through
// node 1, run with the users spread over the nodes, the data consistent,
// NOPM the orders the users committed, the certification conflicts
// classed, every node's replication observed; then the power-loss audit
// on that build (every node killed, the OS page cache kept, no lab) for
// two cycles, the cluster recovered as an operator would (each node's
// position, bootstrap from the most advanced, the others by IST or
// calibra's copy) and every node checked against the acknowledged commits
// and against node 1 (the recovery's sockets must not grow with --path:
// they did, and one a few bytes longer counted every commit of a cycle
// lost); Ctrl-C during a run leaving no mariadbd behind; and clean leaving
// no node behind.
func TestGaleraFromTheCommandLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real MariaDB work; run without -short")
	}
	clitest.RequireGalera(t)
	path := testenv.LongPath(t, 80)
	outs := t.TempDir()
	cluster := []string{"--engine", "mariadb", "--galera", fmt.Sprint(nodes), "--db-cache", "128MB", "--path", path}
	common := append([]string{"--progress", "none"}, cluster...)

	// One warehouse: the run is paced, so its Payments, each updating the
	// one warehouse row from both nodes, conflict now and then, not in a
	// storm (a closed loop on three nodes once kept node 1 from replicating
	// anything for 4 s); the build of two took 110 s beside a busy loop.
	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", filepath.Join(outs, "build")}, common...)...)
	clitest.NoServerLeft(t, path)
	_, b := clitest.LastStep[*results.OLTPBuild](t, filepath.Join(outs, "build"))
	if b.Rows["warehouse"] != 1 || b.Consistency == nil || !b.Consistency.OK {
		t.Fatalf("build: rows %v, consistency %+v", b.Rows, b.Consistency)
	}

	dir := filepath.Join(outs, "run")
	clitest.MustRun(t, 0, append([]string{"oltp", "run", "--users", "6", "--rampup", "1s", "--duration", "6s", oltptest.PacedFlag, "--out", dir}, common...)...)
	st, o := clitest.LastStep[*results.OLTP](t, dir)
	if st.Status != results.StatusComplete || o.NOPM == nil || *o.NOPM <= 0 || o.Consistency == nil || !o.Consistency.OK {
		t.Fatalf("run: status %s, NOPM %v, consistency %+v (%v)", st.Status, o.NOPM, o.Consistency, o.Missing)
	}
	// Node 1's orders are every node's users' committed New-Orders.
	if got, want := *o.NOPM*o.DurationS/60, float64(o.NewOrderCommits); math.Abs(got-want) > 5+want*0.002 {
		t.Errorf("NOPM holds %.0f orders over the window, the users committed %.0f", got, want)
	}
	if len(o.Instances) != nodes {
		t.Fatalf("%d nodes' figures, want %d", len(o.Instances), nodes)
	}
	for _, m := range o.Instances {
		if m.Users != 6/nodes || m.TPMClient <= 0 {
			t.Errorf("node %d: %d users, tpm_client %.0f: want %d users that committed", m.Instance, m.Users, m.TPMClient, 6/nodes)
		}
	}
	for class := range o.ErrorClasses {
		if class == "40001/1213" {
			t.Errorf("a conflict was classed as a deadlock, not certification: %v", o.ErrorClasses)
		}
	}
	t.Logf("NOPM %.0f, retries %v, errors %v", *o.NOPM, o.Retries, o.ErrorClasses)
	if st.Observe == nil || st.Observe.DB == nil || len(st.Observe.DB.Nodes) != nodes {
		t.Fatalf("the step's observe has no per-node replication counters: %+v", st.Observe)
	}
	for _, n := range st.Observe.DB.Nodes {
		if n.Replicated == nil || *n.Replicated <= 0 || n.FlowControlPausedPct == nil {
			t.Errorf("node %d: replicated %v, flow control paused %v", n.Node, n.Replicated, n.FlowControlPausedPct)
		}
	}
	r, err := results.Load(dir)
	if err != nil || r.Meta.Engine == nil || r.Meta.Engine.ClusterNodes != nodes || r.Meta.Engine.Settings["wsrep_on"] != "ON" {
		t.Errorf("meta.engine does not describe the cluster: %v %+v", err, r.Meta.Engine)
	}
	for k := 1; k <= nodes; k++ {
		if _, err := os.Stat(filepath.Join(dir, "logs", "server-"+string(rune('0'+k))+".log")); err != nil {
			t.Errorf("no log of node %d: %v", k, err)
		}
	}
	clitest.NoServerLeft(t, path)
	sweepGaleraSecrets(t, path, dir)

	t.Run("the power-loss audit on the build", func(t *testing.T) {
		audit := filepath.Join(outs, "audit")
		clitest.MustRun(t, 0, append([]string{"durability", "--cycles", "2", "--load", "2s", "--clients", "2", "--out", audit,
			"--threshold", "durability.lost_acknowledged == 0"}, common...)...)
		_, d := clitest.LastStep[*results.Durability](t, audit)
		if d.Cycles != 2 || d.Acknowledged == 0 || d.LostAcknowledged != 0 || d.UnverifiableAcknowledged != 0 {
			t.Fatalf("audit: %d cycles, %d acknowledged, %d missing, %d not verifiable: %s", d.Cycles, d.Acknowledged, d.LostAcknowledged, d.UnverifiableAcknowledged, d.Note)
		}
		for _, c := range d.PerCycle {
			if c.Outcome != "durable" && c.Outcome != "in-flight" || c.Consistency == nil || !c.Consistency.OK || len(c.Nodes) != nodes {
				t.Fatalf("audit cycle %d: outcome %s, consistency %+v, %d nodes checked (want %d)", c.Cycle, c.Outcome, c.Consistency, len(c.Nodes), nodes)
			}
			for _, n := range c.Nodes {
				if n.LostAcknowledged != 0 || !n.ConsistencyOK || n.Differs != "" {
					t.Errorf("cycle %d, node %d after the recovery: %+v", c.Cycle, n.Node, n)
				}
			}
		}
		clitest.NoServerLeft(t, path)
	})

	code, _ := clitest.InterruptChild(t, "oltp run: 6 users", 2*time.Second, append([]string{"oltp", "run", "--users", "6", "--rampup", "1s",
		"--duration", "1m", oltptest.PacedFlag, "--progress", "plain", "--out", filepath.Join(outs, "cut")}, cluster...)...)
	if code != 130 {
		t.Errorf("Ctrl-C: exit %d, want 130", code)
	}
	clitest.NoServerLeft(t, path)

	said := clitest.MustRun(t, 0, "clean", "--path", path)
	if !strings.Contains(said, "MariaDB Galera") {
		t.Errorf("clean did not say it removed the nodes:\n%s", said)
	}
	if left, _ := filepath.Glob(filepath.Join(path, "calibra-mariadb*")); len(left) > 0 {
		t.Errorf("clean left %v", left)
	}
}

// sweepGaleraSecrets checks that nothing another account can read in a
// Galera run directory or under its storage path holds the cluster's
// name (a secret: it is all a stranger's node would need besides the
// TLS), TLS key material or a password (issue 36).
func sweepGaleraSecrets(t *testing.T, path, runDir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, mariadb.DataDirName+"-galera-1", "calibra-galera-name"))
	name := strings.TrimSpace(string(b))
	if err != nil || !strings.HasPrefix(name, "calibra-") {
		t.Fatalf("the cluster's name: %q, %v", name, err)
	}
	for _, dir := range []string{runDir, path} {
		found, err := secret.Readable(dir, name, secret.KeyMaterial, "password=", "IDENTIFIED BY")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("readable by other accounts: %s", f)
		}
	}
}
