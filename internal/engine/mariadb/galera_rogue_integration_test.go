//go:build integration

package mariadb

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/testenv"
)

// Another local account starts its own mariadbd pointed at calibra's
// cluster c, knowing its name and address: in plain TCP (what joined the
// cluster before TLS) and with TLS of a CA of its own. Neither joins:
// every node keeps counting the cluster's nodes, the rogue gets no data
// (no state transfer reaches it, and no rsync runs for it), and a row
// written after stays calibra's. A scenario of TestGaleraCluster, on its
// cluster.
func rogueNodeIsRefused(t *testing.T, c *Cluster) {
	uid, gid := testenv.Stranger(t)
	// The rogues' files (their logs name the cluster) away from the
	// cluster's path, which the cluster test sweeps.
	path := testenv.StorageDir(t)
	n1 := c.Nodes()[0].DB()
	defer n1.Close()
	if _, err := n1.Exec("CREATE TABLE calibra.secret (i int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	nodes := len(c.Nodes())
	target := "127.0.0.1:" + strconv.Itoa(c.ports[0])
	// The two rogues side by side: either one joining shows in every
	// node's count.
	t.Run("rogues", func(t *testing.T) {
		for _, withTLS := range []bool{false, true} {
			t.Run("tls "+strconv.FormatBool(withTLS), func(t *testing.T) {
				t.Parallel()
				dir := rogueDataDir(t, path, uid, gid, withTLS)
				rogue := startRogue(t, c, dir, target, uid, gid, withTLS)
				deadline := time.Now().Add(15 * time.Second)
				for time.Now().Before(deadline) {
					for i, node := range c.Nodes() {
						if size, _, err := nodeStatus(context.Background(), node); err == nil && size != nodes {
							t.Errorf("tls %v: node %d counts %d members with the rogue running, want %d", withTLS, i+1, size, nodes)
						}
					}
					if rsyncFor(dir) {
						t.Errorf("tls %v: an rsync runs for the rogue's data directory", withTLS)
					}
					time.Sleep(500 * time.Millisecond)
				}
				_ = rogue.Process.Signal(syscall.SIGKILL)
				_ = rogue.Wait()
				if _, err := os.Stat(filepath.Join(dir, "data", "calibra")); err == nil {
					t.Errorf("tls %v: the rogue received calibra's database", withTLS)
				}
				if log, _ := os.ReadFile(filepath.Join(dir, "rogue.log")); !strings.Contains(string(log), "gcomm") {
					t.Errorf("tls %v: the rogue did not try to join:\n%s", withTLS, log)
				}
			})
		}
	})
	if _, err := n1.Exec("INSERT INTO calibra.secret VALUES (1)"); err != nil {
		t.Errorf("the cluster after the rogues: %v", err)
	}
}

// rogueDataDir makes the stranger's data directory (mariadb-install-db as
// the stranger) and, for a TLS rogue, certificates of a CA of its own.
func rogueDataDir(t *testing.T, path string, uid, gid int, withTLS bool) string {
	t.Helper()
	dir := filepath.Join(path, "rogue-"+strconv.FormatBool(withTLS))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if withTLS {
		certs, err := newClusterTLS(1)
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range certs[0].files() {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chown(p, uid, gid) })
	// Its output goes to the failure's message (once, beside other tests'
	// loads, it exited 1 into a log no one read).
	testenv.AsStranger(t, `mariadb-install-db --no-defaults --datadir="$1/data" --skip-test-db --auth-root-authentication-method=socket`, dir)
	return dir
}

// startRogue starts the stranger's mariadbd as a Galera node joining target
// under calibra's cluster name.
func startRogue(t *testing.T, c *Cluster, dir, target string, uid, gid int, withTLS bool) *exec.Cmd {
	t.Helper()
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	opts := "base_port=" + strconv.Itoa(ports[0]) + ";gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(ports[0]) +
		";ist.recv_addr=127.0.0.1:" + strconv.Itoa(ports[1])
	if withTLS {
		opts += ";" + strings.ReplaceAll(tlsOptions(), secretsDir, dir)
	}
	cmd := exec.Command(c.nodes[0].Managed.cfg.Bin.Server, "--no-defaults", "--datadir="+dir+"/data",
		"--socket="+dir+"/s.sock", "--pid-file="+dir+"/r.pid", "--skip-networking", "--tmpdir="+dir,
		"--wsrep-on=ON", "--wsrep-provider="+c.provider, "--wsrep-cluster-name="+c.name,
		"--wsrep-cluster-address=gcomm://"+target, "--wsrep-node-address=127.0.0.1:"+strconv.Itoa(ports[0]),
		"--wsrep-provider-options="+opts, "--wsrep-sst-method=rsync",
		"--wsrep-sst-receive-address=127.0.0.1:"+strconv.Itoa(ports[2]),
		"--binlog-format=ROW", "--innodb-autoinc-lock-mode=2", "--innodb-buffer-pool-size=32M")
	log, err := os.Create(filepath.Join(dir, "rogue.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd
}

// rsyncFor reports a live rsync whose command line names dir.
func rsyncFor(dir string) bool {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range comms {
		comm, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		if err == nil && strings.TrimSpace(string(comm)) == "rsync" && strings.Contains(string(b), dir) {
			return true
		}
	}
	return false
}
