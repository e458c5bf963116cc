package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/proc"
)

// DataDirName is the managed instance's directory under the storage path.
const DataDirName = "calibra-pg"

// Dirs name a managed instance's directories: its data's under the
// storage path, its WAL's under --wal-path and its standbys' (K appended)
// under --replica-path. PostgreSQL's are PgDirs; an engine that wraps
// this package names its own, so neither opens nor removes the other's.
type Dirs struct{ Data, WAL, Replica string }

// PgDirs are PostgreSQL's own directories' names.
var PgDirs = Dirs{Data: DataDirName, WAL: WALDirName, Replica: ReplicaDirPrefix}

// or is d, or PostgreSQL's when d names none.
func (d Dirs) or() Dirs {
	if d.Data == "" {
		return PgDirs
	}
	return d
}

// Superuser and Database are the role and database of the managed instance.
const (
	Superuser = "calibra"
	Database  = "calibra"
)

// InstanceConfig describes a managed instance.
type InstanceConfig struct {
	Path           string   // storage under test; the data directory goes under it
	Bin            Binaries // server installation
	RunAs          string   // account to run the server as when calibra is root
	DBCache        string   // shared_buffers, e.g. "1GB"
	MaxConnections int
	LogFile        string         // server log, in the run directory
	Cgroup         *limits.Cgroup // holds the server when set (cache and I/O limits)
	// Settings are the study's engine settings (engine_settings,
	// --engine-setting), over calibra's defaults.
	Settings map[string]string
	// WALPath, when set, is the storage the WAL goes on (initdb --waldir),
	// apart from the data.
	WALPath string
	// Replicas are the standbys to run beside the instance.
	Replicas ReplicaConfig
	// DataChecksums makes initdb checksum every page (-k): a torn or
	// corrupt page then fails its read instead of passing for data.
	DataChecksums bool
	// Dirs name its directories; PostgreSQL's when empty.
	Dirs Dirs
}

// Instance is a throwaway PostgreSQL server calibra creates, starts and stops
// with its data on the storage under test.
type Instance struct {
	server.Process // its socket directory, log and postmaster
	cfg            InstanceConfig
	DataDir        string
	Port           int
	// crashed says the last stop was a Kill: the postmaster.pid it left
	// is stale, and may have come back torn from a power cut.
	crashed bool
	// Overrides replace settings at the next start; only the power-loss
	// audit's calibration uses one (fsync=off), and Describe records it.
	Overrides map[string]string
}

// override sets one of Overrides.
func (in *Instance) override(k, v string) {
	if in.Overrides == nil {
		in.Overrides = map[string]string{}
	}
	in.Overrides[k] = v
}

// NewInstance resolves the account and paths; it starts nothing.
func NewInstance(cfg InstanceConfig) (*Instance, error) {
	// The server runs from "/", so a relative path would point elsewhere.
	abs, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, err
	}
	cfg.Path, cfg.Dirs = abs, cfg.Dirs.or()
	cfg.Replicas.prefix = cfg.Dirs.Replica
	in := &Instance{cfg: cfg, DataDir: filepath.Join(abs, cfg.Dirs.Data)}
	if in.cfg.Replicas.N > 0 {
		if in.cfg.Replicas.Path == "" {
			in.cfg.Replicas.Path = abs
		}
		if in.cfg.Replicas.Path, err = filepath.Abs(in.cfg.Replicas.Path); err != nil {
			return nil, err
		}
	}
	acct, err := server.Lookup("PostgreSQL", cfg.RunAs, "postgres", "postgresql", cfg.Path, cfg.WALPath, in.cfg.Replicas.Path)
	if err != nil {
		return nil, err
	}
	in.Process = newProcess(acct, cfg.Cgroup)
	if cfg.WALPath != "" {
		if in.cfg.WALPath, err = filepath.Abs(cfg.WALPath); err != nil {
			return nil, err
		}
	}
	return in, in.checkWAL()
}

// WALDirName is the WAL directory calibra makes under --wal-path.
const WALDirName = "calibra-wal"

// WALDir is where the instance's WAL lives: under --wal-path when given,
// else pg_wal inside the data directory.
func (in *Instance) WALDir() string {
	if in.cfg.WALPath != "" {
		return filepath.Join(in.cfg.WALPath, in.cfg.Dirs.WAL)
	}
	return in.defaultWALDir()
}

func (in *Instance) defaultWALDir() string { return filepath.Join(in.DataDir, "pg_wal") }

// storageDirs are the directories of the instance's files: the data
// directory, and the WAL's when it lives apart (--wal-path).
func (in *Instance) storageDirs() []string {
	if in.cfg.WALPath != "" {
		return []string{in.DataDir, in.WALDir()}
	}
	return []string{in.DataDir}
}

// checkWAL refuses an existing data directory whose WAL is not where the
// command asks: moving it would be a rebuild, not a setting.
func (in *Instance) checkWAL() error {
	if !in.Exists() {
		return nil
	}
	where := in.defaultWALDir()
	if target, err := os.Readlink(where); err == nil {
		where = target
	}
	if !server.SamePath(where, in.WALDir()) {
		return fault.Input(fmt.Sprintf("run 'calibra clean --path %s' to rebuild it with its WAL where you ask, or give --wal-path %s", in.cfg.Path, filepath.Dir(where)),
			"the data directory %s keeps its WAL in %s, not %s", in.DataDir, where, in.WALDir())
	}
	return nil
}

// newProcess is a postmaster's lifecycle: SIGINT is PostgreSQL's fast
// shutdown (abort sessions, checkpoint, exit).
func newProcess(acct server.Account, cgroup *limits.Cgroup) server.Process {
	return server.Process{Cgroup: cgroup, Spec: server.Spec{Title: "PostgreSQL", Comm: "postgres", Account: acct,
		SocketPrefix: socketDirPrefix, Shutdown: syscall.SIGINT, Grace: time.Minute, StartTimeout: 2 * time.Minute, LastWords: serverError}}
}

// serverError picks the log lines that say why a start failed: the
// shutdown's own lines come after them ("invalid page in block 7" would
// otherwise scroll away behind "database system is shut down").
func serverError(line string) bool {
	if strings.Contains(line, "the database system is starting up") || strings.Contains(line, "the database system is not yet accepting connections") {
		return false // its answer to calibra's readiness probe, not why it failed
	}
	return strings.Contains(line, "FATAL:") || strings.Contains(line, "PANIC:") || strings.Contains(line, "ERROR:")
}

// Exists reports whether the data directory has been fully initialised.
func (in *Instance) Exists() bool { return server.Initialised(in.DataDir) }

// Init runs initdb into the data directory, clearing the remains of an
// interrupted earlier one.
func (in *Instance) Init(ctx context.Context, group *proc.Group) error {
	if err := server.RemoveDir(in.DataDir); err != nil {
		return fmt.Errorf("clear %s: %w", in.DataDir, err)
	}
	if _, err := in.Account.Mkdir(filepath.Dir(in.DataDir), filepath.Base(in.DataDir)); err != nil {
		return err
	}
	args := []string{"-U", Superuser, "--auth-local=peer", "--auth-host=reject", "--encoding=UTF8", "--locale=C", "--no-sync"}
	if in.cfg.DataChecksums {
		args = append(args, "--data-checksums")
	}
	initdb := func(dir string) error {
		cmd := in.cfg.Bin.Command("initdb", append([]string{"-D", dir}, args...)...)
		out, err := in.Account.Run(ctx, group, "initdb", cmd)
		if err != nil {
			return fmt.Errorf("initdb into %s: %w: %s", in.DataDir, err, server.LastLines(out, 1, "\n"))
		}
		return nil
	}
	outside := ""
	if wal := in.WALDir(); wal != in.defaultWALDir() {
		// initdb takes an existing empty directory; the account may not
		// be allowed to create one under the user's path.
		if err := server.RemoveDir(wal); err != nil {
			return fmt.Errorf("clear %s: %w", wal, err)
		}
		if _, err := in.Account.Mkdir(filepath.Dir(wal), filepath.Base(wal)); err != nil {
			return err
		}
		args = append(args, "--waldir="+wal)
		outside = wal
	}
	initialiser := server.Initialiser{Program: in.cfg.Bin.Command("initdb").Path, Args: args, Outside: outside, Run: initdb}
	if err := server.Initialise(ctx, in.Account, group, in.DataDir, initialiser); err != nil {
		return err
	}
	return server.MarkInitialised(nil, in.DataDir, in.WALDir())
}

// Settings are the server settings calibra starts the instance with: sane
// for a benchmark, honest about durability (fsync and synchronous commit on).
func (in *Instance) Settings() map[string]string {
	maxConn := in.cfg.MaxConnections
	if maxConn < 100 {
		maxConn = 100
	}
	cache := in.cfg.DBCache
	if cache == "" {
		cache = DefaultDBCache
	}
	s := map[string]string{
		"listen_addresses":             "",
		"port":                         strconv.Itoa(in.Port),
		"unix_socket_directories":      in.SocketDir,
		"shared_buffers":               cache,
		"max_connections":              strconv.Itoa(maxConn),
		"max_wal_size":                 "8GB",
		"min_wal_size":                 "1GB",
		"checkpoint_completion_target": "0.9",
		"track_io_timing":              "on",
		"jit":                          "off",
		"logging_collector":            "off",
		"log_line_prefix":              "%m [%p] ",
		"log_checkpoints":              "on",
		"maintenance_work_mem":         "512MB",
		"fsync":                        "on",
		"synchronous_commit":           "on",
		"full_page_writes":             "on",
	}
	if in.cfg.Bin.Major >= 14 {
		s["track_wal_io_timing"] = "on"
	}
	in.cfg.Replicas.settings(s)
	for k, v := range in.cfg.Settings {
		s[k] = v
	}
	for k, v := range in.Overrides {
		s[k] = v
	}
	return s
}

// ManagedSettings are the settings calibra itself owns on the managed
// instance: its access (no TCP listener, a private socket) and its files.
// A study cannot set them.
var ManagedSettings = []string{"listen_addresses", "port", "unix_socket_directories", "unix_socket_permissions",
	"unix_socket_group", "hba_file", "ident_file", "data_directory", "config_file", "logging_collector", "shared_preload_libraries"}

// refusedSetting finds, in the server's last words, the line that refuses
// one of the study's settings: the setting and the server's reason.
func (in *Instance) refusedSetting(startErr string) (key, why string, ok bool) {
	lines := strings.FieldsFunc(strings.ReplaceAll(startErr, " | ", "\n"), func(r rune) bool { return r == '\n' })
	for i, line := range lines {
		for k := range in.cfg.Settings {
			if !strings.Contains(line, `parameter "`+k+`"`) {
				continue
			}
			if _, after, found := strings.Cut(line, "FATAL:"); found {
				line = after
			}
			why = strings.TrimSpace(line)
			if i+1 < len(lines) {
				if _, hint, found := strings.Cut(lines[i+1], "HINT:"); found {
					why += " (" + strings.TrimSuffix(strings.TrimSpace(hint), ".") + ")"
				}
			}
			return k, why, true
		}
	}
	return "", "", false
}

// DefaultDBCache is shared_buffers when the study does not say.
const DefaultDBCache = "1GB"

// Start starts the server as a child of calibra and waits until it accepts
// connections. The caller must Stop it on every path.
func (in *Instance) Start(ctx context.Context, group *proc.Group) error {
	if in.Running() {
		return nil // starting is a no-op
	}
	if err := server.AwaitLeftover(ctx, "PostgreSQL", in.cfg.Path, in.DataDir, in.runningPID); err != nil {
		return err
	}
	if in.crashed {
		// Ours, and dead (runningPID): PostgreSQL refuses to start over a
		// lock file a power cut left empty or torn.
		_ = os.Remove(filepath.Join(in.DataDir, "postmaster.pid")) // safefs: unlinks the name (never follows it) in the data directory, whose parent no other account can change
		in.crashed = false
	}
	if err := in.Prepare(in.cfg.LogFile); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		var err error
		if in.Port, err = freePort(); err != nil {
			return err
		}
		err = in.startOnce(ctx, group)
		if err != nil {
			if k, why, ok := in.refusedSetting(err.Error()); ok {
				return fault.Input("fix or remove that engine setting (PostgreSQL "+in.cfg.Bin.Version+"'s documentation lists its settings)",
					"PostgreSQL %s refused the engine setting %s=%s: %s", in.cfg.Bin.Version, k, in.cfg.Settings[k], why)
			}
		}
		if err == nil || attempt == 2 || ctx.Err() != nil || !strings.Contains(err.Error(), "could not bind") {
			return err
		}
	}
}

func (in *Instance) startOnce(ctx context.Context, group *proc.Group) error {
	if err := in.lockAccess(); err != nil {
		return err
	}
	return in.Spawn(ctx, group, server.Hooks{Command: in.command, Ready: in.ready})
}

// command is the postmaster's command line: every setting on it.
func (in *Instance) command() *exec.Cmd {
	args := []string{"-D", in.DataDir}
	settings := in.Settings()
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}
	return in.cfg.Bin.Command("postgres", args...)
}

// ready reports whether the server accepts a connection. Any answer but
// "not yet" (57P03: starting up, recovering) is final: a torn catalog page
// refuses every connection ("invalid page in block"), and the start waited
// out its two minutes for it.
func (in *Instance) ready(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, in.ConnString("postgres"))
	if err == nil {
		conn.Close(ctx)
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code != "57P03" {
		return server.Refusal(err)
	}
	return err
}

// Restart stops the server, evicts its files from the OS page cache
// (limits.DropCaches), and starts it again on the same port and socket,
// so that connections made from the same settings (the observers') find
// it again: a cold start. It reports whether every file was evicted.
func (in *Instance) Restart(ctx context.Context, group *proc.Group) (bool, error) {
	if err := in.Halt(); err != nil {
		return false, err
	}
	dropped, err := limits.DropCaches(in.storageDirs()...)
	if err != nil {
		return false, err
	}
	return dropped, in.startOnce(ctx, group)
}

// Kill kills the server and its backends at once, as a crash does (see
// server.Process.Kill); the next Start recovers it.
func (in *Instance) Kill() {
	in.crashed = true
	in.Process.Kill()
}

// lockAccess writes the instance's client authentication before each
// start, so a data directory made by an older calibra with trust is locked
// too: no TCP listener (listen_addresses is empty), and on the Unix socket,
// in a directory only the server's account can enter, peer authentication
// that lets in only calibra's own account (root, or the user running it)
// and the server's account, as the superuser. No password exists to leak.
func (in *Instance) lockAccess() error {
	accounts := map[string]bool{}
	if u, err := user.Current(); err == nil {
		accounts[u.Username] = true
	}
	if in.Account.Name != "" {
		accounts[in.Account.Name] = true
	}
	names := make([]string, 0, len(accounts))
	for name := range accounts {
		names = append(names, name)
	}
	sort.Strings(names)
	var ident strings.Builder
	ident.WriteString("# Written by calibra at every start: the OS accounts that may log in as " + Superuser + ".\n")
	for _, name := range names {
		fmt.Fprintf(&ident, "calibra %s %s\n", name, Superuser)
	}
	files := map[string]string{
		// Replication connections (standbys, pg_basebackup) come over the
		// same socket from the same mapped accounts.
		"pg_hba.conf": "# Written by calibra at every start: socket only, peer authentication, no trust.\n" +
			"local all all peer map=calibra\n" +
			"local replication all peer map=calibra\n",
		"pg_ident.conf": ident.String(),
	}
	for name, text := range files {
		// The data directory is the server account's: a link it put at
		// the name is replaced, never followed.
		if err := in.Account.WriteFile(filepath.Join(in.DataDir, name), []byte(text), 0o600); err != nil {
			return fmt.Errorf("lock the managed instance: %w", err)
		}
	}
	return nil
}

// ConnString is a libpq-style connection string to db over the Unix socket.
func (in *Instance) ConnString(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", in.SocketDir, in.Port, Superuser, db)
}

// runningPID reports a live postmaster that owns the data directory.
func (in *Instance) runningPID() (int, bool) {
	return server.PIDIn(filepath.Join(in.DataDir, "postmaster.pid"), in.DataDir, "postgres")
}

// Remove stops any server left running on PostgreSQL's data directory
// under path (a crashed calibra's) and deletes the directory. It reports
// whether there was anything to remove.
func Remove(path string) (bool, error) { return PgDirs.Remove(path) }

// Remove is Remove of the instance whose directories d names.
func (d Dirs) Remove(path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	in := &Instance{DataDir: filepath.Join(abs, d.Data)}
	// The standbys first: the primary's directory records where they are.
	hadReplicas, err := removeReplicas(abs, in.DataDir, d.Replica)
	if err != nil {
		return hadReplicas, err
	}
	if _, err := os.Lstat(in.DataDir); errors.Is(err, os.ErrNotExist) {
		return hadReplicas, nil
	}
	if pid, ok := in.runningPID(); ok {
		server.StopLeftover(pid, syscall.SIGQUIT, 10*time.Second, func() bool { _, ok := in.runningPID(); return ok })
	}
	// WAL that --wal-path put on other storage goes with its data: the
	// link is the server account's to change, so only a directory of
	// that account's, named as calibra names it, in a directory no other
	// account can change (RemoveDir), is taken for it.
	var wal string
	if target, err := os.Readlink(in.defaultWALDir()); err == nil && filepath.IsAbs(target) && filepath.Base(target) == d.WAL && server.OwnedLike(target, in.DataDir) {
		wal = filepath.Clean(target)
	}
	if err := server.RemoveDir(in.DataDir); err != nil {
		return true, err
	}
	if wal != "" {
		return true, server.RemoveDir(wal)
	}
	return true, nil
}

// socketDirPrefix names the private socket directories in
// server.SocketBase.
const socketDirPrefix = "calibra-sock-"

// RemoveStaleSockets removes the socket directories that dead runs left
// (a killed calibra cannot remove its own): those whose lock no live
// calibra holds and where no live server has its socket. It returns the
// directories removed.
func RemoveStaleSockets() ([]string, error) {
	return server.RemoveStaleSockets(socketDirPrefix, serverListens)
}

// serverListens reports whether a live postmaster holds a socket lock
// file (.s.PGSQL.PORT.lock, its PID on the first line) in dir.
func serverListens(dir string) bool {
	locks, _ := filepath.Glob(filepath.Join(dir, ".s.PGSQL.*.lock"))
	for _, l := range locks {
		data, err := server.ReadSmall(l)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(data), "\n")
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH {
			return true
		}
	}
	return false
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
