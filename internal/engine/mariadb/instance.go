package mariadb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/proc"
)

// DataDirName is the managed instance's directory under the storage path.
const DataDirName = "calibra-mariadb"

// Database is calibra's database (schema) on the managed instance.
const Database = "calibra"

// RedoDirName is the redo log's directory calibra makes under --wal-path.
const RedoDirName = "calibra-redo"

// DefaultDBCache is innodb_buffer_pool_size when the study does not say,
// the same as PostgreSQL's shared_buffers, so the two compare.
const DefaultDBCache = "1GB"

// ServerMemory is what mariadbd holds beyond its buffer pool and its
// connections' own buffers: the performance schema's instruments, the redo
// log buffer, the dictionary and the adaptive hash index. A memory limit
// that leaves it out gets the server OOM-killed (measured here: 434 MB
// resident with a 256 MB buffer pool and 16 users).
const ServerMemory = 256 << 20

// redoLogSize is innodb_log_file_size for a buffer pool of pool bytes:
// as large as the pool, between MariaDB's default 96 MiB and 1 GiB. A log
// smaller than the pool would make a benchmark measure InnoDB's
// checkpoint pressure more than the storage (PostgreSQL's max_wal_size is
// 8GB for the same reason); one as large as the pool holds every change
// the pool can keep dirty (a change logs far less than its 16 KiB page),
// so the pool, not the log, sets when pages are flushed. Past 1 GiB a
// larger log buys nothing a benchmark sees and costs its init (the log is
// written through when the instance is made): 3.9 s for 1 GiB, 0.5 s for
// 128 MiB here.
func redoLogSize(pool int64) int64 { return min(max(pool, 96<<20), 1<<30) }

// serverDisk is the redo log at a pool of cacheBytes and 256 MiB for the
// system and undo tablespaces, Aria's logs and, in a cluster, Galera's
// write-set cache (128 MiB).
func serverDisk(cacheBytes uint64) uint64 {
	return uint64(redoLogSize(int64(min(cacheBytes, 1<<40)))) + 256<<20
}

// InstanceConfig describes a managed instance.
type InstanceConfig struct {
	Path           string   // storage under test; the data directory goes under it
	Bin            Binaries // server installation
	RunAs          string   // account to run the server as when calibra is root
	DBCache        string   // innodb_buffer_pool_size, e.g. "1GB"
	MaxConnections int
	LogFile        string         // server log, in the run directory
	Cgroup         *limits.Cgroup // holds the server when set (cache and I/O limits)
	// Settings are the study's engine settings over calibra's defaults,
	// as mariadbd's options without the dashes (innodb_io_capacity=2000).
	Settings map[string]string
	// WALPath, when set, is the storage the redo log goes on
	// (innodb_log_group_home_dir), apart from the data.
	WALPath string
	// Node is the instance's number in a Galera cluster (from 1), which
	// names its data and redo directories; 0 for the single instance.
	Node int
}

// Instance is a throwaway MariaDB server calibra creates, starts and stops
// with its data on the storage under test.
type Instance struct {
	server.Process // its socket directory, log and mariadbd
	cfg            InstanceConfig
	DataDir        string
	// client is calibra's own OS account: the one MariaDB account, and
	// the one OS account, that can log in (unix_socket authentication).
	client string
	// overrides replace settings at the next start; only the power-loss
	// audit's calibration uses them (engine.go, UnsafeCommits).
	overrides map[string]string
	// wsrep are a Galera node's settings (galera.go), calibra's own;
	// newCluster makes the next start bootstrap the cluster.
	wsrep      map[string]string
	newCluster bool
	// secrets are a Galera node's TLS files by name, written with its
	// option file into its socket directory before each start.
	secrets map[string][]byte
}

// override sets one of overrides.
func (in *Instance) override(k, v string) {
	if in.overrides == nil {
		in.overrides = map[string]string{}
	}
	in.overrides[k] = v
}

// dirName is the data directory's name under the storage path, and
// redoName the redo log's under --wal-path, of node (0: the single
// instance).
func dirName(node int) string  { return nodeName(DataDirName, node) }
func redoName(node int) string { return nodeName(RedoDirName, node) }

func nodeName(base string, node int) string {
	if node == 0 {
		return base
	}
	return base + "-galera-" + strconv.Itoa(node)
}

// NewInstance resolves the accounts and paths; it starts nothing.
func NewInstance(cfg InstanceConfig) (*Instance, error) {
	abs, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, err
	}
	cfg.Path = abs
	in := &Instance{cfg: cfg, DataDir: filepath.Join(abs, dirName(cfg.Node))}
	me, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("find calibra's own account: %w", err)
	}
	in.client = me.Username
	acct, err := server.Lookup("MariaDB", cfg.RunAs, "mysql", "mariadb-server", cfg.Path, cfg.WALPath)
	if err != nil {
		return nil, err
	}
	// SIGTERM is mariadbd's normal shutdown: close sessions, flush, exit.
	in.Process = server.Process{Cgroup: cfg.Cgroup, Spec: server.Spec{Title: "MariaDB", Comm: "mariadbd", Account: acct,
		SocketPrefix: socketDirPrefix, Shutdown: syscall.SIGTERM, Grace: 5 * time.Minute, StartTimeout: startTimeout, LastWords: serverError}}
	if cfg.WALPath != "" {
		if in.cfg.WALPath, err = filepath.Abs(cfg.WALPath); err != nil {
			return nil, err
		}
	}
	return in, in.checkRedo()
}

// TmpDir holds the server's temporary files (sorts and temporary tables
// that spill), on the storage under test as PostgreSQL's are: beside the
// data directory, where MariaDB would take a directory for a database.
func (in *Instance) TmpDir() string { return in.DataDir + "-tmp" }

// RedoDir is where the instance's redo log (ib_logfile0) lives: under
// --wal-path when given, else in the data directory.
func (in *Instance) RedoDir() string {
	if in.cfg.WALPath != "" {
		return filepath.Join(in.cfg.WALPath, redoName(in.cfg.Node))
	}
	return in.DataDir
}

// storageDirs are the directories of the instance's files: the data
// directory, and the redo log's when it lives apart (--wal-path).
func (in *Instance) storageDirs() []string {
	if in.cfg.WALPath != "" {
		return []string{in.DataDir, in.RedoDir()}
	}
	return []string{in.DataDir}
}

// Exists reports whether the data directory has been fully initialised;
// its marker (server.InitialisedMarker) holds the redo log's directory.
func (in *Instance) Exists() bool { return server.Initialised(in.DataDir) }

// recordedRedoDir is the redo directory the data directory was made with.
func (in *Instance) recordedRedoDir() string {
	b, err := server.ReadSmall(filepath.Join(in.DataDir, server.InitialisedMarker))
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return in.DataDir
	}
	return strings.TrimSpace(string(b))
}

// checkRedo refuses an existing data directory whose redo log is not where
// the command asks: moving it would be a rebuild, not a setting.
func (in *Instance) checkRedo() error {
	if !in.Exists() {
		return nil
	}
	if where := in.recordedRedoDir(); !server.SamePath(where, in.RedoDir()) {
		return fault.Input(fmt.Sprintf("run 'calibra clean --path %s' to rebuild it with its redo log where you ask, or give --wal-path %s", in.cfg.Path, filepath.Dir(where)),
			"the data directory %s keeps its redo log in %s, not %s", in.DataDir, where, in.RedoDir())
	}
	return nil
}

// Init runs mariadb-install-db into the data directory, clearing the
// remains of an interrupted earlier one. The only accounts it makes are
// root@localhost and calibra's own account, both authenticated by the
// unix_socket plugin (the connecting process's OS account), so there is no
// password anywhere.
func (in *Instance) Init(ctx context.Context, group *proc.Group) error {
	// Its own temporary directory: the bootstrap's temporary tables in the
	// shared /tmp collided with another bootstrap's (MariaDB names them by
	// process and thread), failing one install in ten side by side.
	dirs := []string{in.DataDir, in.TmpDir()}
	if in.RedoDir() != in.DataDir {
		dirs = append(dirs, in.RedoDir())
	}
	for _, dir := range dirs {
		if err := server.RemoveDir(dir); err != nil {
			return fmt.Errorf("clear %s: %w", dir, err)
		}
		if _, err := in.Account.Mkdir(filepath.Dir(dir), filepath.Base(dir)); err != nil {
			return err
		}
	}
	args := []string{"--no-defaults",
		"--auth-root-authentication-method=socket", "--auth-root-socket-user=" + in.client,
		"--skip-test-db", "--skip-name-resolve",
		"--debug-no-sync", // mark flushes it all at once
		"--innodb-log-file-size=" + in.Settings()["innodb_log_file_size"]}
	if in.cfg.Bin.Basedir != "" {
		args = append(args, "--basedir="+in.cfg.Bin.Basedir)
	}
	install := func(dir string) error {
		redo := in.RedoDir()
		if redo == in.DataDir {
			redo = dir
		}
		cmd := in.cfg.Bin.InstallDB.Command(append([]string{"--datadir=" + dir, "--tmpdir=" + in.TmpDir(), "--innodb-log-group-home-dir=" + redo}, args...)...)
		out, err := in.Account.Run(ctx, group, "mariadb-install-db", cmd)
		if err != nil {
			// Its last lines ask for a bug report; its errors say why (a
			// redo log the file system has no room for).
			var tail server.Tail
			_, _ = tail.Write([]byte(out))
			return fmt.Errorf("mariadb-install-db into %s: %w: %s", in.DataDir, err, tail.Matching(serverError))
		}
		return in.writeRedoLog(ctx, group, redo)
	}
	initialiser := server.Initialiser{Program: in.cfg.Bin.InstallDB.Path, Args: args, Run: install}
	if in.RedoDir() != in.DataDir {
		initialiser.Outside = in.RedoDir()
	}
	if err := server.Initialise(ctx, in.Account, group, in.DataDir, initialiser); err != nil {
		return err
	}
	return in.mark()
}

// writeRedoLog writes the new redo log over with its own bytes, as the
// server's account. InnoDB makes the file with fallocate, whose extents
// stay unwritten until first written, so on ext4 or XFS each commit's
// fdatasync into a fresh part of the log also commits the extent's
// conversion, for the log's whole first pass (a GiB of commits). Measured
// on 10.11 at one committer (bench/iocal-vs-fio.sh, three rounds each):
// p99 0.193-0.202 ms fallocated, 0.158-0.179 ms written, the mean 0.1 ms
// either way. PostgreSQL fills its WAL segments with zeros before use for
// the same reason (wal_init_zero). Unwritten extents read as zeros, so the
// file's contents stay as they were; 1 GiB took 0.9-3.4 s here.
func (in *Instance) writeRedoLog(ctx context.Context, group *proc.Group, redoDir string) error {
	log := filepath.Join(redoDir, "ib_logfile0")
	cmd := in.cfg.Bin.DD.Command("if="+log, "of="+log, "bs=1M", "conv=notrunc", "status=none")
	if out, err := in.Account.Run(ctx, group, "dd", cmd); err != nil {
		return fmt.Errorf("write the new redo log %s: %w: %s", log, err, server.LastLines(out, 2, " | "))
	}
	return nil
}

// mark writes the marker of a complete data directory; a Galera node
// writes it again after a state transfer, which brings the donor's.
func (in *Instance) mark() error {
	return server.MarkInitialised([]byte(in.RedoDir()+"\n"), in.DataDir, in.RedoDir())
}

// Settings are the server settings calibra starts the instance with, as
// mariadbd's options: sane for a benchmark and honest about durability
// (the redo log flushed at every commit, the doublewrite buffer on, data
// and log files opened with O_DIRECT so the OS cache does not flatter the
// storage), performance_schema on for the waits, and the buffer pool
// neither dumped at shutdown nor loaded at startup, so a restart is cold.
func (in *Instance) Settings() map[string]string {
	cache := in.cfg.DBCache
	if cache == "" {
		cache = DefaultDBCache
	}
	pool, _ := sizeBytes(cache) // checked by Prepare
	s := map[string]string{
		"innodb_buffer_pool_size":                                 strconv.FormatInt(pool, 10),
		"innodb_flush_method":                                     "O_DIRECT",
		"innodb_flush_log_at_trx_commit":                          "1",
		"innodb_doublewrite":                                      "ON",
		"innodb_log_file_size":                                    strconv.FormatInt(redoLogSize(pool), 10),
		"innodb_buffer_pool_dump_at_shutdown":                     "OFF",
		"innodb_buffer_pool_load_at_startup":                      "OFF",
		"performance_schema":                                      "ON",
		"performance_schema_consumer_events_waits_current":        "ON",
		"performance_schema_consumer_events_transactions_current": "ON",
		"character_set_server":                                    "utf8mb4",
		"collation_server":                                        "utf8mb4_general_ci",
		// InnoDB counts its checkpoints only when asked (INNODB_METRICS).
		"innodb_monitor_enable": "log_checkpoints",
	}
	if in.cfg.MaxConnections > 151 {
		s["max_connections"] = strconv.Itoa(in.cfg.MaxConnections)
	}
	for k, v := range in.cfg.Settings {
		s[normalName(k)] = v
	}
	for k, v := range in.overrides {
		s[k] = v
	}
	for k, v := range in.wsrep {
		// The study's provider options (gcs.fc_limit...) come after
		// calibra's addresses, which CheckSettings keeps them off.
		if extra := s[k]; k == "wsrep_provider_options" && extra != "" {
			v += ";" + extra
		}
		s[k] = v
	}
	return s
}

// instruments are the performance_schema instruments calibra turns on:
// every wait (file I/O, locks, mutexes: the AWR analogue) and transactions
// (the exact transaction count of Transactions).
var instruments = []string{"wait/%=ON", "transaction=ON"}

// ManagedSettings are the options calibra itself owns on the managed
// instance: its access (no TCP listener, a private socket) and its files.
// A study cannot set them.
var ManagedSettings = []string{"datadir", "socket", "port", "skip_networking", "bind_address", "pid_file", "user",
	"innodb_log_group_home_dir", "innodb_data_home_dir", "tmpdir", "log_error", "plugin_dir", "basedir", "skip_grant_tables",
	"init_file", "named_pipe", "extra_port", "secure_auth",
	// A Galera node's place in its cluster and its state transfers.
	"wsrep_on", "wsrep_provider", "wsrep_cluster_address", "wsrep_cluster_name", "wsrep_node_address", "wsrep_node_name",
	"wsrep_node_incoming_address", "wsrep_sst_method", "wsrep_sst_receive_address", "wsrep_sst_donor", "wsrep_new_cluster"}

// CheckSettings refuses a study setting calibra owns, before anything runs;
// an unknown one the server itself refuses at its start.
func CheckSettings(settings map[string]string) error {
	var owned []string
	for k := range settings {
		for _, m := range ManagedSettings {
			if normalName(k) == m {
				owned = append(owned, k)
			}
		}
	}
	for k, v := range settings {
		if normalName(k) == "wsrep_provider_options" && ownedProviderOption.MatchString(v) {
			owned = append(owned, k+"'s addresses")
		}
	}
	if len(owned) == 0 {
		return nil
	}
	sort.Strings(owned)
	return fault.Input("leave it out: calibra sets it on the instance it manages",
		"the engine setting %s is calibra's own on the managed MariaDB instance", strings.Join(owned, ", "))
}

// ownedProviderOption finds, in the study's wsrep_provider_options, the
// addresses calibra gives each node on the loopback interface and its
// TLS settings (socket.dynamic would let a node accept plain TCP).
var ownedProviderOption = regexp.MustCompile(`(?i)(^|;)\s*(base_host|base_port|gmcast\.listen_addr|gmcast\.peer_addr|ist\.recv_addr|ist\.recv_bind|socket\.ssl\w*|socket\.dynamic)\s*=`)

func normalName(k string) string { return strings.ReplaceAll(strings.TrimLeft(k, "-"), "-", "_") }

// args are mariadbd's command line: no option file is read (--no-defaults
// must come first), so nothing in /etc/mysql changes the instance; a
// Galera node reads its own option file only (--defaults-file), which
// holds its wsrep settings.
func (in *Instance) args() []string {
	first := "--no-defaults"
	if in.wsrep != nil {
		first = "--defaults-file=" + filepath.Join(in.SocketDir, optionFileName)
	}
	args := []string{first, "--datadir=" + in.DataDir, "--socket=" + in.socket(),
		"--pid-file=" + in.pidFile(), "--skip-networking", "--innodb-log-group-home-dir=" + in.RedoDir(),
		"--skip-name-resolve", "--tmpdir=" + in.TmpDir()}
	if in.cfg.Bin.Basedir != "" {
		args = append(args, "--basedir="+in.cfg.Bin.Basedir)
	}
	if in.newCluster {
		args = append(args, "--wsrep-new-cluster")
	}
	settings := in.Settings()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, inFile := in.wsrep[k]; !inFile {
			args = append(args, "--"+k+"="+settings[k])
		}
	}
	for _, i := range instruments {
		args = append(args, "--performance-schema-instrument="+i)
	}
	return args
}

func (in *Instance) socket() string  { return filepath.Join(in.SocketDir, "mysqld.sock") }
func (in *Instance) pidFile() string { return filepath.Join(in.DataDir, "mariadbd.pid") }

var unknownOption = regexp.MustCompile(`unknown (?:variable|option) '-*([^'=]+)`)

// refusedSetting finds, in the server's last words, the study setting it
// refused.
func (in *Instance) refusedSetting(startErr string) (key string, ok bool) {
	m := unknownOption.FindStringSubmatch(startErr)
	if m == nil {
		return "", false
	}
	for k := range in.cfg.Settings {
		if normalName(k) == normalName(m[1]) {
			return k, true
		}
	}
	return "", false
}

// Start starts the server as a child of calibra and waits until it accepts
// connections. The caller must Stop it on every path.
func (in *Instance) Start(ctx context.Context, group *proc.Group) error {
	if in.Running() {
		return nil // starting is a no-op
	}
	if err := server.AwaitLeftover(ctx, "MariaDB", in.cfg.Path, in.DataDir, in.runningPID); err != nil {
		return err
	}
	if err := in.Prepare(in.cfg.LogFile); err != nil {
		return err
	}
	if err := in.makeTmpDir(); err != nil {
		return err
	}
	err := in.startOnce(ctx, group)
	if err != nil {
		if k, ok := in.refusedSetting(err.Error()); ok {
			return fault.Input("fix or remove that engine setting (mariadbd --verbose --help lists them)",
				"MariaDB %s does not know the engine setting %s=%s", in.cfg.Bin.Version, k, in.cfg.Settings[k])
		}
	}
	return err
}

// makeTmpDir makes the server's temporary directory beside its data
// directory, or takes the one an earlier start made (server.Account.Mkdir).
func (in *Instance) makeTmpDir() error {
	_, err := in.Account.Mkdir(filepath.Dir(in.TmpDir()), filepath.Base(in.TmpDir()))
	return err
}

// startTimeout bounds a start, which includes InnoDB's crash recovery.
const startTimeout = 5 * time.Minute

func (in *Instance) startOnce(ctx context.Context, group *proc.Group) error {
	if in.wsrep != nil {
		if err := in.writeSecrets(in.SocketDir); err != nil {
			return err
		}
	}
	return in.Spawn(ctx, group, server.Hooks{Command: in.command, Ready: in.ping})
}

// command is mariadbd's command line; a Galera node's finds its state
// transfer's tools.
func (in *Instance) command() *exec.Cmd {
	cmd := exec.Command(in.cfg.Bin.Server, in.args()...)
	if in.wsrep != nil {
		cmd.Env = server.PlainEnv()
		in.sstPath(cmd)
	}
	return cmd
}

func (in *Instance) ping(ctx context.Context) error {
	if _, err := os.Stat(in.socket()); err != nil {
		return err
	}
	db := sql.OpenDB(mustConnector(in.Config("")))
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil || in.wsrep == nil {
		return err
	}
	// A Galera node answers before it has its state; it serves once Synced.
	var name, state string
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'").Scan(&name, &state); err != nil {
		return err
	}
	if state != "Synced" {
		return fmt.Errorf("the Galera node is %s, not Synced", state)
	}
	return nil
}

func mustConnector(cfg *mysql.Config) driver.Connector {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		panic(err) // only a malformed configuration, which calibra builds itself
	}
	return c
}

// Config is a connection to database db (none when empty) over the
// instance's socket, as calibra's own OS account: unix_socket
// authentication, no password.
func (in *Instance) Config(db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = in.client
	cfg.Net = "unix"
	cfg.Addr = in.socket()
	cfg.DBName = db
	cfg.ParseTime = true
	cfg.Timeout = 10 * time.Second
	return cfg
}

// Restart stops the server, evicts its files from the OS page cache
// (limits.DropCaches), and starts it again on the same socket, so that
// connections made from the same settings (the observers') find it again:
// a cold start, as the buffer pool is neither dumped nor loaded. It
// reports whether every file was evicted.
func (in *Instance) Restart(ctx context.Context, group *proc.Group) (bool, error) {
	if err := in.Halt(); err != nil {
		return false, err
	}
	dropped, err := limits.DropCaches(in.storageDirs()...)
	if err != nil {
		return false, err
	}
	if in.SocketDir == "" {
		return dropped, in.Start(ctx, group)
	}
	return dropped, in.startOnce(ctx, group)
}

// runningPID reports a live mariadbd that owns the data directory. A
// stale pid file (a crash's) names a dead process or, its PID reused, one
// that is not a mariadbd working in this directory.
func (in *Instance) runningPID() (int, bool) {
	return server.PIDIn(in.pidFile(), in.DataDir, "mariadbd", "mysqld")
}

// Remove stops any server left running on the data directory under path
// (a crashed calibra's) and deletes the directory, its redo log and its
// temporary directory. It reports whether there was anything to remove.
func Remove(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	return removeDataDir(filepath.Join(abs, DataDirName))
}

// removeDataDir removes one instance's data directory (see Remove).
func removeDataDir(dataDir string) (bool, error) {
	in := &Instance{DataDir: dataDir}
	if _, err := os.Lstat(in.DataDir); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if pid, ok := in.runningPID(); ok {
		server.StopLeftover(pid, syscall.SIGTERM, 30*time.Second, func() bool { _, ok := in.runningPID(); return ok })
	}
	// The marker is in the server account's directory: only a directory
	// of that account's, named as calibra names it, in a directory no
	// other account can change (RemoveDir), is taken for the redo log.
	redo := filepath.Clean(in.recordedRedoDir())
	// Judged before the data directory (the owner to match) goes.
	ownRedo := redo != filepath.Clean(in.DataDir) && filepath.IsAbs(redo) && strings.HasPrefix(filepath.Base(redo), RedoDirName) && server.OwnedLike(redo, in.DataDir)
	if err := server.RemoveDir(in.TmpDir()); err != nil {
		return true, err
	}
	if err := server.RemoveDir(in.DataDir); err != nil {
		return true, err
	}
	if ownRedo {
		return true, server.RemoveDir(redo)
	}
	return true, nil
}

// serverError picks the lines of mariadbd's log that say why it stopped.
func serverError(line string) bool {
	return strings.Contains(line, "ERROR") || strings.Contains(line, "unknown")
}

// socketDirPrefix names the private socket directories in
// server.SocketBase (PostgreSQL's are calibra-sock-).
const socketDirPrefix = "calibra-mysock-"

// RemoveStaleSockets removes the socket directories that dead runs left:
// those whose lock no live calibra holds and where no live server has its
// socket. It returns the directories removed.
func RemoveStaleSockets() ([]string, error) {
	return server.RemoveStaleSockets(socketDirPrefix, serverListens)
}

// serverListens reports whether a live server holds the socket's lock file
// (mysqld.sock.lock, its PID inside) in dir.
func serverListens(dir string) bool {
	data, err := server.ReadSmall(filepath.Join(dir, "mysqld.sock.lock"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.Trim(strings.TrimSpace(string(data)), "\x00"))
	return err == nil && pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([kKmMgGtT]?)[iI]?[bB]?$`)

// sizeBytes reads a cache size as --db-cache gives it (PostgreSQL's
// spelling, 256MB or 8GB, or MariaDB's, 8G; every unit a power of 1024;
// a bare number is bytes) in bytes.
func sizeBytes(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fault.Input("write it as e.g. 256MB or 8GB", "%q is not a cache size", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	shift := 0
	if m[2] != "" {
		shift = strings.Index("kmgt", strings.ToLower(m[2])) + 1
	}
	if err != nil || n > (1<<62)>>(10*shift) {
		return 0, fault.Input("write it as e.g. 256MB or 8GB", "the cache size %q is too large", s)
	}
	return n << (10 * shift), nil
}
