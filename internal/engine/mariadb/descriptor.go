package mariadb

import (
	"context"
	"fmt"
	"io"
	"log"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Name is the engine's name in results.json and --engine.
const Name = "mariadb"

// galeraFlag is --galera, a Galera cluster of that many managed nodes.
const galeraFlag = "galera"

func init() {
	// The driver would print to stderr, over calibra's progress display,
	// what it also returns as errors (and a session a reset ended).
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	engine.Register(engine.Descriptor{
		Name: Name, Title: "MariaDB", Open: open,
		DSNSchemes: []string{"mysql", "mariadb"},
		DSNExample: "mysql://user@host:3306/db",
		RedactDSN:  redactDriverDSN,
		Cache: engine.Cache{Setting: "innodb_buffer_pool_size", Default: DefaultDBCache, Parse: func(s string) (uint64, bool) {
			n, err := sizeBytes(s)
			return uint64(n), err == nil
		}, Min: 2 << 20, Example: "256M or 8G"},
		ServerMemory:  ServerMemory,
		ServerDisk:    serverDisk,
		CheckSettings: CheckSettings,
		CheckServer: func(cfg engine.Config) error {
			if _, err := FindBinaries(""); err != nil {
				return err
			}
			return CheckSettings(cfg.Settings)
		},
		Managed: []engine.Managed{
			{Title: "MariaDB", Pattern: DataDirName + "*", Remove: Remove, Dir: DataDirName,
				Holds: "the managed MariaDB instance, its redo log and temporary directory"},
			{Title: "MariaDB Galera", Pattern: DataDirName + "-galera-*", Remove: RemoveGalera, Dir: DataDirName + "-galera-K",
				Holds: "a Galera cluster's nodes (--galera), each with its temporary directory"}},
		RemoveStaleSockets: RemoveStaleSockets,
		EphemeralSettings:  []string{"port", "innodb_log_group_home_dir", "tmpdir"},
		Options: []engine.Option{{Flag: galeraFlag, Key: "galera", Int: true, Nodes: true, Role: "makes a MariaDB Galera cluster",
			Usage: fmt.Sprintf("a Galera cluster of N managed nodes on this machine (1 to %d; PATH/%s-galera-K), users spread over them; needs galera-4", MaxClusterNodes, DataDirName)}},
		CheckOptions: checkGalera,
		Servers:      galeraNodes,
		ClusterTitle: "Galera",
		Words:        words,
	})
}

// words are MariaDB's terms in reports: InnoDB's counters (it neither times
// its redo log nor counts checkpoints there, the oltp step does; its row
// locks say more).
var words = terms.Words{
	Waits:        "Database time per wait event, from samples of the workload's sessions in performance_schema.events_waits_current (their states in information_schema.PROCESSLIST where performance_schema is off), an InnoDB row lock wait told by INNODB_TRX (the ASH idea); seconds = samples × the time a sample stands for (the sampling interval, or the samples' mean spacing where a busy machine kept them further apart); \"CPU\" is an active session in no instrumented wait. Avg ms comes from the waits performance_schema timed over the window.",
	Transactions: "performance_schema's transactions of calibra's account",
	Checkpoints:  "InnoDB checkpoints in the timed window (INNODB_METRICS log_checkpoints; fuzzy, advancing the redo log's checkpoint)",
	Log:          "redo log",
	Counters: []terms.Counter{{Field: "active_sessions_avg", Head: "active sessions"}, {Field: "blks_read", Head: "pages read"},
		{Field: "hit_pct", Head: "buffer pool hit %"}, {Field: "data_reads", Head: "data file reads"}, {Field: "data_file_read_avg_ms", Head: "data file read ms"},
		{Field: "data_writes", Head: "data file writes"}, {Field: "row_lock_waits", Head: "row lock waits"}, {Field: "row_lock_avg_ms", Head: "row lock ms"}},
	CountersOf: "InnoDB",
	Cluster:    "Galera cluster",
	WaitKind:   waitKind,
}

// waitKind is what a performance_schema wait means to the verdict: row and
// metadata locks and the latches (mutexes, rw-locks) are one class of
// locks; the redo log's file I/O is apart from the data files'.
func waitKind(class, event string) (string, terms.WaitKind) {
	switch {
	case class == "CPU":
		return class, terms.OnCPU
	case strings.HasPrefix(class, "lock/"), strings.HasPrefix(class, "synch/"):
		return "Lock", terms.LockWait
	case class == "io/file" && strings.Contains(event, "log_file"):
		return "WAL", terms.CommitWait
	case class == "io/file":
		return "IO", terms.StorageWait
	}
	return class, terms.OtherWait
}

func open(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
	tc := TargetConfig{DSN: cfg.DSN, Path: cfg.Path, RunAs: cfg.RunAs, DBCache: cfg.DBCache,
		MaxConnections: cfg.MaxConnections, ServerLog: cfg.ServerLog, Cgroup: cfg.Cgroup, Settings: cfg.Settings, WALPath: cfg.WALPath,
		Galera: galeraNodes(cfg.Options)}
	if tc.Galera > 0 {
		return PrepareCluster(ctx, tc)
	}
	return Prepare(ctx, tc)
}

// galeraNodes is --galera's nodes; 0 for one server.
func galeraNodes(options map[string]string) int {
	n, _ := strconv.Atoi(options[galeraFlag])
	return n
}

// checkGalera refuses --galera where it cannot run: it starts managed
// nodes, with the Galera provider installed.
func checkGalera(cfg engine.Config, instances int) error {
	n, err := strconv.Atoi(cfg.Options[galeraFlag])
	switch {
	case cfg.Options[galeraFlag] == "":
		return nil // one server
	case err != nil || n < 1 || n > MaxClusterNodes:
		// --galera 0 is a cluster of no node, not one server: refused
		// rather than run as something the command did not say.
		return fault.Input(fmt.Sprintf("give 1 to %d nodes (1: a single-node cluster, for comparison)", MaxClusterNodes), "--galera %s is not a number of nodes calibra runs on one machine", cfg.Options[galeraFlag])
	case cfg.DSN != "":
		return fault.Input("drop --dsn, or drop --galera", "--galera starts managed MariaDB nodes; it cannot run on a --dsn server")
	case instances > 1:
		return fault.Input("drop --instances, or drop --galera", "--galera's nodes share one database; --instances runs servers that each have their own")
	}
	_, err = FindProvider()
	return err
}

// driverPassword is the MySQL driver's own DSN form:
// user:password@tcp(host:port)/db, user:password@unix(/path)/db or
// user:password@/db.
var driverPassword = regexp.MustCompile(`^([^:@/()]*:).*@([a-z0-9]*\(|/)`)

func redactDriverDSN(dsn string) (string, bool) {
	if !driverPassword.MatchString(dsn) {
		return dsn, false
	}
	return driverPassword.ReplaceAllString(dsn, "${1}xxxxx@${2}"), true
}
