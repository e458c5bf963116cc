//go:build integration

package mariadb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/enginetest"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// requireGalera skips a test that needs Galera where galera-4 is not
// installed, unless CALIBRA_TEST_REQUIRE names galera: then it fails.
func requireGalera(t *testing.T) {
	t.Helper()
	requireServer(t)
	_, missing := FindProvider()
	if missing == nil {
		if _, err := exec.LookPath("rsync"); err != nil {
			missing = err
		}
	}
	testenv.Need(t, "galera", missing, "apt-get install galera-4 rsync")
}

func prepareCluster(t *testing.T, path string, n int) *Cluster {
	t.Helper()
	c, err := PrepareCluster(context.Background(), TargetConfig{Path: path, Galera: n, DBCache: "64MB"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A 3-node cluster on loopback: a row written through node 1's socket is
// read on node 3, every node counts 3, no other local account logs in to
// any node, nor joins it as a rogue node, the counters and settings hold
// (the conformance suite's, on this cluster), and no mariadbd is left
// after Stop; killed, the cluster comes back in a new calibra's hands
// with every row, on a --path of 100 bytes.
func TestGaleraCluster(t *testing.T) {
	t.Parallel()
	requireGalera(t)
	path := testenv.LongPath(t, 100)
	c := prepareCluster(t, path, 3)
	runDir := runDirectory(t)
	c.SetServerLog(filepath.Join(runDir, "logs", "server.log"))
	group := testenv.Start(t, c)
	ctx := context.Background()
	sweepSecrets(t, c, runDir, path, socketBase(t))
	n1, n3 := c.Nodes()[0].DB(), c.Nodes()[2].DB()
	defer n1.Close()
	defer n3.Close()
	if _, err := n1.ExecContext(ctx, "CREATE TABLE replicated (i int PRIMARY KEY, s varchar(20))"); err != nil {
		t.Fatal(err)
	}
	if _, err := n1.ExecContext(ctx, "INSERT INTO replicated VALUES (1, 'from node 1')"); err != nil {
		t.Fatal(err)
	}
	var s string
	// wsrep_sync_wait makes the read wait for what the cluster committed.
	conn, err := n3.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT s FROM replicated WHERE i = 1").Scan(&s); err != nil || s != "from node 1" {
		t.Errorf("node 3 reads %q (%v), want node 1's row", s, err)
	}
	conn.Close()
	for i, node := range c.Nodes() {
		size, state, err := nodeStatus(ctx, node)
		if err != nil || size != 3 || state != "Synced" {
			t.Errorf("node %d sees %d nodes and is %q (%v), want 3 and Synced", i+1, size, state, err)
		}
		var networking string
		db := node.DB()
		if err := db.QueryRow("SELECT @@skip_networking").Scan(&networking); err != nil || networking != "1" && networking != "ON" {
			t.Errorf("node %d: skip_networking reads %q (%v)", i+1, networking, err)
		}
		db.Close()
		refuseStranger(t, node.Managed)
	}
	if d := c.Describe(); d.ClusterNodes != 3 || d.Settings["wsrep_on"] != "ON" {
		t.Errorf("the description counts %d nodes, wsrep_on %q", d.ClusterNodes, d.Settings["wsrep_on"])
	}
	// The scenarios that need a running cluster and leave it as it was,
	// side by side on this one; it is stopped once they are done.
	t.Run("on the running cluster", func(t *testing.T) {
		t.Run("a rogue node is refused", func(t *testing.T) {
			t.Parallel()
			rogueNodeIsRefused(t, c)
		})
		s := galeraSuite()
		s.Shared = true
		enginetest.RunShared(t, s, c)
	})
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if pids := testenv.ProcessesUnder(path); len(pids) > 0 {
		t.Fatalf("processes still work under %s after Stop: %v", path, pids)
	}
	sweepSecrets(t, c, runDir, path)
	// Node 1 stopped last: it bootstraps again, and the row survived.
	if _, err := c.Start(ctx, group); err != nil {
		t.Fatalf("restart after stop: %v", err)
	}
	n3b := c.Nodes()[2].DB()
	defer n3b.Close()
	if err := n3b.QueryRow("SELECT s FROM replicated WHERE i = 1").Scan(&s); err != nil {
		t.Errorf("node 3 after a restart: %v", err)
	}
	// A power cut: the nodes killed at once, then a new calibra (new
	// nodes, no socket directories yet) recovers each node's position
	// (mariadbd --wsrep-recover) and bootstraps from the latest. Its
	// socket path must fit the kernel's 107 bytes whatever --path is.
	c.Kill()
	c = prepareCluster(t, path, 3)
	c.SetServerLog(filepath.Join(runDir, "logs", "server.log"))
	if _, err := c.Start(ctx, group); err != nil {
		t.Fatalf("recover after a kill on a --path of %d bytes: %v", len(path), err)
	}
	n3c := c.Nodes()[2].DB()
	defer n3c.Close()
	if err := n3c.QueryRow("SELECT s FROM replicated WHERE i = 1").Scan(&s); err != nil {
		t.Errorf("node 3 after a kill and recovery: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	// clean's removal leaves nothing under the path.
	if had, err := RemoveGalera(path); err != nil || !had {
		t.Fatalf("remove: had %v, %v", had, err)
	}
	if left, _ := filepath.Glob(filepath.Join(path, "calibra-mariadb*")); len(left) > 0 {
		t.Errorf("left after removal: %v", left)
	}
}

// runDirectory is a run directory as the runner makes it: readable by
// others, with its logs/.
func runDirectory(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func socketBase(t *testing.T) string {
	t.Helper()
	base, err := server.SocketBase(false)
	if err != nil {
		t.Fatal(err)
	}
	return base
}

// sweepSecrets checks that no file another account can read under dirs
// holds the cluster's name or TLS key material (issue 36): the nodes'
// logs name the cluster, so they are 0600.
func sweepSecrets(t *testing.T, c *Cluster, dirs ...string) {
	t.Helper()
	if len(c.name) < len("calibra-") {
		t.Fatalf("the cluster has no name to look for: %q", c.name)
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		found, err := secret.Readable(dir, c.name, secret.KeyMaterial)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("readable by other accounts: %s", f)
		}
	}
	logged := false
	for k := 1; k <= len(c.nodes); k++ {
		b, err := os.ReadFile(engine.MemberLog(filepath.Join(dirs[0], "logs", "server.log"), k))
		if err != nil {
			t.Errorf("node %d's log: %v", k, err)
		}
		logged = logged || strings.Contains(string(b), c.name)
	}
	t.Logf("the nodes' logs name the cluster: %v", logged)
}

// refuseStranger checks that the account nobody cannot log in to a node,
// even past its private socket directory.
func refuseStranger(t *testing.T, in *Instance) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	stranger, err := user.Lookup("nobody")
	if err != nil {
		return
	}
	uid, _ := strconv.Atoi(stranger.Uid)
	gid, _ := strconv.Atoi(stranger.Gid)
	if err := os.Chmod(in.SocketDir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(in.SocketDir, 0o700)
	cmd := exec.Command("mariadb", "--no-defaults", "-S", in.socket(), "-u", "root", "-e", "SELECT 'in'")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Access denied") {
		t.Errorf("the account nobody was not refused by %s: %v %s", in.DataDir, err, out)
	}
}

// Cancelling the start at any moment leaves no mariadbd: while node 1
// initialises, while a node joins.
func TestGaleraCancelledStartLeavesNoServer(t *testing.T) {
	t.Parallel()
	requireGalera(t)
	for _, after := range []time.Duration{300 * time.Millisecond, 4 * time.Second} {
		path := testenv.StorageDir(t)
		c := prepareCluster(t, path, 2)
		group := proc.NewGroup()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(after, cancel)
		_, err := c.Start(ctx, group)
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %s: %v", after, err)
		}
		_ = c.Stop()
		if err := group.StopAll(time.Minute); err != nil {
			t.Fatal(err)
		}
		if pids := testenv.ProcessesUnder(path); len(pids) > 0 {
			t.Fatalf("cancelled after %s: processes still work under %s: %v", after, path, pids)
		}
		cancel()
	}
}

// The conformance suite on a 2-node cluster: Start, Stop and Restart
// idempotent, recovery after every node was killed, the template reset,
// counters, settings, cancellation.
// The counters and the settings run on TestGaleraCluster's cluster.
func TestGaleraConformance(t *testing.T) {
	t.Parallel()
	requireGalera(t)
	s := galeraSuite()
	s.Shared = true
	enginetest.Run(t, s)
}

// galeraSuite is the conformance suite on a 2-node cluster of 64 MiB
// caches, as prepareCluster makes them.
func galeraSuite() enginetest.Suite {
	s := suite()
	s.Config = engine.Config{Options: map[string]string{galeraFlag: "2"}, DBCache: "64MB"}
	s.DB = func(e engine.Engine) *sql.DB { return e.(*Cluster).Nodes()[0].DB() }
	s.Value = "67108864"
	return s
}
