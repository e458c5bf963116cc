package mariadb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// MaxClusterNodes bounds --galera: each node is a whole server on this
// machine, with its own buffer pool.
const MaxClusterNodes = 9

// providerPaths are where distributions put Galera 4's provider.
var providerPaths = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/galera-4/libgalera_smm.so",
	"/usr/lib64/galera-4/libgalera_smm.so", "/usr/lib/libgalera_smm.so"}

// FindProvider locates Galera's replication library, which each node's
// mariadbd loads: it passes the rule for what calibra runs, as a program.
func FindProvider() (string, error) {
	for _, p := range providerPaths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return safefs.CheckTrusted(p, "the Galera provider")
		}
	}
	return "", fault.Input("install it: apt-get install galera-4", "--galera needs the Galera provider (libgalera_smm.so), which is not installed")
}

// Cluster is a Galera cluster of managed MariaDB nodes on this machine
// (--galera N), each a Target of its own under PATH/calibra-mariadb-galera-k
// on its private socket, the nodes talking to each other on loopback ports
// only, over TLS with the cluster's own CA. Node 1 bootstraps a new
// cluster; the others join it as copies calibra makes of it (no state
// transfer). Its members serve one database (SharedData).
type Cluster struct {
	nodes    []*Target
	provider string
	rsync    proc.Program // copies a node's data into the others (seed)
	ports    []int        // per node: group communication, IST
	name     string       // wsrep_cluster_name, random per cluster
	// rejoined is how each node came back at the last Start (Rejoined).
	rejoined []string
}

// PrepareCluster checks what --galera needs and prepares each node; it
// starts nothing.
func PrepareCluster(ctx context.Context, cfg TargetConfig) (*Cluster, error) {
	if cfg.DSN != "" {
		return nil, fault.Input("drop --dsn, or drop --galera", "--galera starts managed nodes; it cannot run on a --dsn server")
	}
	if cfg.Galera < 1 || cfg.Galera > MaxClusterNodes {
		return nil, fault.Input(fmt.Sprintf("give 1 to %d nodes", MaxClusterNodes), "--galera %d is not a number of nodes calibra runs on one machine", cfg.Galera)
	}
	provider, err := FindProvider()
	if err != nil {
		return nil, err
	}
	c := &Cluster{provider: provider}
	if cfg.Galera > 1 {
		if c.rsync, err = proc.Need("rsync", "rsync on PATH",
			fault.Input("install it: apt-get install rsync", "--galera copies the data into its joining nodes by rsync, which is not installed")); err != nil {
			return nil, err
		}
	}
	for k := 1; k <= cfg.Galera; k++ {
		nc := cfg
		nc.Galera, nc.node = 0, k
		t, err := Prepare(ctx, nc)
		if err != nil {
			return nil, err
		}
		t.cluster = c
		c.nodes = append(c.nodes, t)
	}
	return c, nil
}

// The capabilities a Galera cluster has.
var (
	_ engine.Group              = (*Cluster)(nil)
	_ engine.Crasher            = (*Cluster)(nil)
	_ engine.ColdRestarter      = (*Cluster)(nil)
	_ engine.Resetter           = (*Cluster)(nil)
	_ engine.TransactionCounter = (*Cluster)(nil)
)

func (c *Cluster) Name() string { return Name }

// Members are the nodes, node 1 first; each is a *Target, so the MariaDB
// dialects serve it.
func (c *Cluster) Members() []engine.Engine {
	m := make([]engine.Engine, len(c.nodes))
	for i, t := range c.nodes {
		m[i] = t
	}
	return m
}

// Nodes are the nodes as Targets.
func (c *Cluster) Nodes() []*Target { return c.nodes }

// SharedData is true: the nodes serve one database.
func (c *Cluster) SharedData() bool { return true }

// Local is node 1's place, with every node's repairs.
func (c *Cluster) Local() *engine.Local {
	l := c.nodes[0].Local()
	for _, t := range c.nodes[1:] {
		l.Repairs = append(l.Repairs, t.Repairs...)
	}
	return l
}

// Describe is node 1's version and settings (the wsrep settings with
// them), the target naming every node's data directory.
func (c *Cluster) Describe() results.Engine {
	d := c.nodes[0].Describe()
	dirs := make([]string, len(c.nodes))
	for i, t := range c.nodes {
		dirs[i] = t.Managed.DataDir
	}
	d.Target = strings.Join(dirs, ", ")
	d.ClusterNodes = len(c.nodes)
	return d
}

// SetServerLog gives node k its own log beside path (server-k.log).
func (c *Cluster) SetServerLog(path string) {
	for i, t := range c.nodes {
		t.SetServerLog(engine.MemberLog(path, i+1))
	}
}

// running reports whether any node's server runs.
func (c *Cluster) running() (all, any bool) {
	all = true
	for _, t := range c.nodes {
		alive := t.Managed.Running()
		all, any = all && alive, any || alive
	}
	return all, any
}

// Start starts the cluster: the node that may bootstrap it (node 1, unless
// an interruption left another ahead) with --wsrep-new-cluster, then the
// others, each once it is Synced; then it waits until every node sees all
// of them. The nodes take no state transfer (see galera_seed.go): a new
// cluster's node 1 starts once alone, and every joiner that needs it is
// a copy of the bootstrapping node made while all are stopped. A node
// that died while the others ran is brought back the same way, after
// they stop. A node that fails says so with its last words; the caller's
// Stop stops those started.
func (c *Cluster) Start(ctx context.Context, group *proc.Group) (bool, error) {
	all, any := c.running()
	if all {
		return false, nil
	}
	if any {
		if err := c.stopNodes(); err != nil {
			return false, err
		}
	}
	if err := c.prepareNodes(); err != nil {
		return false, err
	}
	boot, err := c.bootstrapNode(ctx, group)
	if err != nil {
		return false, err
	}
	initialised, err := c.firstStart(ctx, group, boot)
	if err != nil {
		return initialised, err
	}
	c.rejoined = make([]string, len(c.nodes))
	if err := c.seedJoiners(ctx, group, boot); err != nil {
		return initialised, err
	}
	failed, err := c.startInOrder(ctx, group, boot)
	// A joiner the bootstrapping node could not catch up by IST (its gap
	// no longer in the donor's write-set cache, as after a power cut):
	// copy it from the stopped cluster and start again, once a joiner.
	for seeded := map[int]bool{}; err != nil && failed >= 0 && failed != boot && !seeded[failed] && needsCopy(err) && ctx.Err() == nil; {
		seeded[failed] = true
		if err := c.stopNodes(); err != nil {
			return initialised, err
		}
		if boot, err = c.bootstrapNode(ctx, group); err != nil {
			return initialised, err
		}
		if err := c.seedNode(ctx, group, boot, failed); err != nil {
			return initialised, err
		}
		failed, err = c.startInOrder(ctx, group, boot)
	}
	for i := range c.rejoined {
		switch {
		case i == boot:
			c.rejoined[i] = "bootstrap"
		case c.rejoined[i] == "":
			c.rejoined[i] = "ist"
		}
	}
	return initialised, err
}

// Rejoined says how each node came back at the last start: "bootstrap"
// (it started the cluster), "ist" (on its own data, caught up by IST when
// behind), or "copy of node K" (calibra's copy, its gap beyond IST).
func (c *Cluster) Rejoined() []string { return c.rejoined }

// needsCopy says whether a joiner failed for want of a state transfer it
// could not have by IST (calibra's nodes take no full one over the
// network), rather than for a fault of its own, which a copy would hide.
func needsCopy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Will never receive state") || strings.Contains(msg, "State transfer to")
}

// startInOrder starts the bootstrapping node, then the others, then waits
// until every node sees them all; it reports the node that failed.
func (c *Cluster) startInOrder(ctx context.Context, group *proc.Group, boot int) (int, error) {
	order := []int{boot}
	for i := range c.nodes {
		if i != boot {
			order = append(order, i)
		}
	}
	for _, i := range order {
		err := c.startNode(ctx, group, i, i == boot)
		if err != nil && i != boot && unreached(err) && ctx.Err() == nil {
			err = c.startNode(ctx, group, i, false)
		}
		if err != nil {
			return i, err
		}
	}
	return -1, c.waitSize(ctx)
}

// unreached says whether a joiner exited before it reached the cluster,
// its group communication not open (seen once beside the suite on a
// loaded CI machine: "-3 (No such process)"): it changed nothing, and
// one more start is worth it.
func unreached(err error) bool {
	return strings.Contains(err.Error(), "Failed to open backend connection")
}

// prepareNodes gives every node, before the cluster starts, its loopback
// ports, the cluster's name and a TLS certificate of a new private CA.
func (c *Cluster) prepareNodes() error {
	ports, err := freePorts(2 * len(c.nodes))
	if err != nil {
		return fmt.Errorf("find free loopback ports for the Galera nodes: %w", err)
	}
	c.ports = ports
	if c.name, err = c.clusterName(); err != nil {
		return err
	}
	if err := c.keepName(c.name); err != nil {
		return fmt.Errorf("record the Galera cluster's name: %w", err)
	}
	certs, err := newClusterTLS(len(c.nodes))
	if err != nil {
		return fmt.Errorf("make the Galera cluster's TLS certificates: %w", err)
	}
	for i, t := range c.nodes {
		t.Managed.wsrep = c.wsrep(i)
		t.Managed.secrets = certs[i].files()
	}
	return nil
}

// startNode starts node i, bootstrapping the cluster or joining it.
func (c *Cluster) startNode(ctx context.Context, group *proc.Group, i int, boot bool) error {
	in := c.nodes[i].Managed
	in.newCluster = boot
	_, err := c.nodes[i].Start(ctx, group)
	in.newCluster = false
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		verb := "join the cluster"
		if boot {
			verb = "bootstrap the cluster"
		}
		return fmt.Errorf("the Galera node %d of %d did not %s: %w", i+1, len(c.nodes), verb, err)
	}
	return nil
}

// wsrep are node i's Galera settings: loopback addresses only, TLS with
// the cluster's own CA, a random cluster name, IST only (galera_sst.go;
// the write-set cache kept over a restart, gcache.recover, so that a
// joiner catches up after one), and the applier threads one per CPU (Galera's
// advice starts from the core count; the default of 1 would make a
// node's applying, not the storage, the bound). They go into the node's
// option file, not its command line.
func (c *Cluster) wsrep(i int) map[string]string {
	gcomm := make([]string, len(c.nodes))
	for k := range c.nodes {
		gcomm[k] = "127.0.0.1:" + strconv.Itoa(c.ports[2*k])
	}
	p := c.ports[2*i : 2*i+2]
	return map[string]string{
		"wsrep_on":              "ON",
		"wsrep_provider":        c.provider,
		"wsrep_cluster_name":    c.name,
		"wsrep_cluster_address": "gcomm://" + strings.Join(gcomm, ","),
		"wsrep_node_name":       "node-" + strconv.Itoa(i+1),
		"wsrep_node_address":    gcomm[i],
		"wsrep_provider_options": fmt.Sprintf("base_host=127.0.0.1;base_port=%d;gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.recover=yes;%s",
			p[0], p[0], p[1], tlsOptions()),
		"wsrep_sst_method":    sstMethod,
		"wsrep_slave_threads": strconv.Itoa(runtime.NumCPU()),
		// Galera's requirements: row events, interleaved auto-increments.
		"binlog_format":            "ROW",
		"innodb_autoinc_lock_mode": "2",
	}
}

// freePorts picks n free TCP ports on the loopback interface.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// waitSize waits until every node counts them all in the cluster.
func (c *Cluster) waitSize(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		var last string
		ok := true
		for i, t := range c.nodes {
			size, state, err := nodeStatus(ctx, t)
			if err != nil || size != len(c.nodes) || state != "Synced" {
				ok = false
				last = fmt.Sprintf("node %d sees %d nodes and is %s (%v)", i+1, size, state, err)
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the Galera cluster did not gather its %d nodes within a minute: %s", len(c.nodes), last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// nodeStatus is a node's view of the cluster's size and its own state.
func nodeStatus(ctx context.Context, t *Target) (int, string, error) {
	db := Open(t.Managed.Config(""))
	defer db.Close()
	var size int
	var state string
	err := db.QueryRowContext(ctx, `SELECT
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'),
		(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT')`).Scan(&size, &state)
	return size, state, err
}

// grastate is what a node's grastate.dat says of its last position.
type grastate struct {
	exists bool
	uuid   string
	seqno  int64
	safe   bool
}

var (
	seqnoRE     = regexp.MustCompile(`(?m)^seqno:\s*(-?\d+)`)
	uuidRE      = regexp.MustCompile(`(?m)^uuid:\s*([0-9a-f-]+)`)
	safeRE      = regexp.MustCompile(`(?m)^safe_to_bootstrap:\s*(\d)`)
	recoveredRE = regexp.MustCompile(`Recovered position:\s*[0-9a-f-]+:(-?\d+)`)
)

func (in *Instance) grastateFile() string { return filepath.Join(in.DataDir, "grastate.dat") }

func readGrastate(in *Instance) grastate {
	b, err := server.ReadSmall(in.grastateFile())
	if err != nil {
		return grastate{seqno: -1}
	}
	g := grastate{exists: true, seqno: -1}
	if m := seqnoRE.FindSubmatch(b); m != nil {
		g.seqno, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if m := safeRE.FindSubmatch(b); m != nil {
		g.safe = string(m[1]) == "1"
	}
	if m := uuidRE.FindSubmatch(b); m != nil {
		g.uuid = string(m[1])
	}
	return g
}

// bootstrapNode picks the node that starts the cluster anew. Galera marks
// safe_to_bootstrap only on the last node to leave a cluster stopped in
// turn (Stop stops node 1 last); after an interruption that stopped the
// nodes at once, or killed them, the node with the latest committed
// position bootstraps, so no commit is lost: its position is in
// grastate.dat after a clean stop, else recovered from InnoDB
// (mariadbd --wsrep-recover).
func (c *Cluster) bootstrapNode(ctx context.Context, group *proc.Group) (int, error) {
	states := make([]grastate, len(c.nodes))
	seen := false
	for i, t := range c.nodes {
		states[i] = readGrastate(t.Managed)
		seen = seen || states[i].exists
		if states[i].safe {
			return i, nil
		}
	}
	if !seen {
		return 0, nil // a new cluster
	}
	best := -1
	for i, t := range c.nodes {
		if !states[i].exists {
			continue
		}
		if states[i].seqno < 0 {
			seqno, err := t.Managed.recoverPosition(ctx, group)
			if err != nil {
				return 0, fmt.Errorf("the Galera node %d: recover its last position: %w", i+1, err)
			}
			states[i].seqno = seqno
		}
		if best < 0 || states[i].seqno > states[best].seqno {
			best = i
		}
	}
	if err := rewriteGrastate(c.nodes[best].Managed, states[best].seqno, true); err != nil {
		return 0, fmt.Errorf("mark Galera node %d to bootstrap the cluster: %w", best+1, err)
	}
	return best, nil
}

// recoverPosition runs mariadbd --wsrep-recover, which reads InnoDB's last
// committed replication position and exits.
func (in *Instance) recoverPosition(ctx context.Context, group *proc.Group) (int64, error) {
	// The recovery listens on no socket, yet mariadbd checks that the
	// socket's path fits the kernel's 107 bytes and aborts otherwise: the
	// node's own private socket directory (the one its start uses), never
	// one under --path, whose length is the user's.
	if err := in.Prepare(""); err != nil {
		return -1, err
	}
	if err := in.makeTmpDir(); err != nil {
		return -1, err
	}
	if err := in.writeSecrets(in.SocketDir); err != nil {
		return -1, err
	}
	defer in.removeSecrets(in.SocketDir)
	cmd := exec.Command(in.cfg.Bin.Server, append(in.args(), "--wsrep-recover")...)
	out, err := in.Account.Run(ctx, group, "mariadbd --wsrep-recover", cmd)
	if err != nil {
		return -1, fmt.Errorf("%w: %s", err, strings.TrimSpace(server.LastWords(out, serverError)))
	}
	m := recoveredRE.FindStringSubmatch(out)
	if m == nil {
		return -1, nil
	}
	return strconv.ParseInt(m[1], 10, 64)
}

// Stop stops the nodes, node 1 last, so that it is the one Galera marks
// safe to bootstrap the next start from.
func (c *Cluster) Stop() error { return c.stopNodes() }

// stopNodes stops every node, node 1 last.
func (c *Cluster) stopNodes() error {
	var errs []error
	for i := len(c.nodes) - 1; i >= 0; i-- {
		if err := c.nodes[i].Stop(); err != nil {
			errs = append(errs, fmt.Errorf("the Galera node %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// Kill kills every node at once, as a power cut would; the next Start
// recovers each node's position and bootstraps from the latest.
func (c *Cluster) Kill() {
	for _, t := range c.nodes {
		t.Kill()
	}
}

// Restart stops every node (node 1 last), evicts their files from the OS
// page cache, and starts the cluster again on the same sockets: a cold
// start of every node.
func (c *Cluster) Restart(ctx context.Context, group *proc.Group) (bool, error) {
	for i := len(c.nodes) - 1; i >= 0; i-- {
		if err := c.nodes[i].Managed.Halt(); err != nil {
			return false, fmt.Errorf("the Galera node %d: %w", i+1, err)
		}
	}
	var dirs []string
	for _, n := range c.nodes {
		dirs = append(dirs, n.Managed.storageDirs()...)
	}
	dropped, err := limits.DropCaches(dirs...)
	if err != nil {
		return false, err
	}
	_, err = c.Start(ctx, group)
	return dropped, err
}

// The loaded template is node 1's, copied by rows so that the cluster
// replicates it (see fileCopyable).
func (c *Cluster) SaveTemplate(ctx context.Context, note string) (string, error) {
	return c.nodes[0].SaveTemplate(ctx, note)
}

func (c *Cluster) TemplateNote(ctx context.Context) (string, bool, error) {
	return c.nodes[0].TemplateNote(ctx)
}

func (c *Cluster) RestoreTemplate(ctx context.Context) error { return c.nodes[0].RestoreTemplate(ctx) }

// Transactions sums calibra's transactions over the nodes: each node's
// performance_schema counts the sessions it served, not the write sets it
// applied for the others.
func (c *Cluster) Transactions(ctx context.Context) (int64, error) {
	var sum int64
	for i, t := range c.nodes {
		n, err := t.Transactions(ctx)
		if err != nil {
			return 0, fmt.Errorf("the Galera node %d: %w", i+1, err)
		}
		sum += n
	}
	return sum, nil
}

// RemoveGalera stops the Galera nodes a crashed calibra left running under
// path and removes their data; it reports whether there were any.
func RemoveGalera(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	dirs, err := filepath.Glob(filepath.Join(abs, DataDirName+"-galera-*"))
	if err != nil {
		return false, err
	}
	removed := false
	var errs []error
	for _, dir := range dirs {
		if strings.HasSuffix(dir, "-tmp") {
			continue // removed with its node
		}
		had, err := removeDataDir(dir)
		removed = removed || had
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// UnsafeCommits makes every node's next start run with commits not
// flushed (Target.UnsafeCommits).
func (c *Cluster) UnsafeCommits() string {
	var s string
	for _, t := range c.nodes {
		s = t.UnsafeCommits()
	}
	return s
}
