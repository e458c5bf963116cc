package postgres

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Name is the engine's name in results.json and --engine.
const Name = "postgresql"

// binFlag is --pg-bin, the server binaries of the managed instance.
const binFlag = "pg-bin"

func init() {
	engine.Register(Descriptor(PostgreSQL, func(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
		return Open(ctx, PostgreSQL, cfg)
	}))
}

// Kind is this package's server under a name of its own: PostgreSQL, or
// an engine that wraps this package (a test's), with its own directories
// and options, so that neither opens or removes the other's instance nor
// names the other's options in a fix.
type Kind struct {
	Name, Title string
	Default     bool
	Dirs        Dirs
	// BinFlag is the option that names the server binaries; "" when the
	// kind has none and runs the ones installed here.
	BinFlag string
}

// PostgreSQL is the engine this package registers.
var PostgreSQL = Kind{Name: Name, Title: "PostgreSQL", Default: true, Dirs: PgDirs, BinFlag: binFlag}

// Descriptor is the description of k, opened by open.
func Descriptor(k Kind, open engine.Opener) engine.Descriptor {
	d := engine.Descriptor{
		Name: k.Name, Title: k.Title, Default: k.Default, Open: open,
		DSNSchemes:  []string{"postgres", "postgresql"},
		DSNExample:  "postgres://user@host:5432/db",
		DSNPassword: "PGPASSWORD or ~/.pgpass",
		Cache: engine.Cache{Setting: "shared_buffers", Default: DefaultDBCache, Parse: memoryBytes,
			Min: 16 * 8 << 10, Example: "256MB or 8GB"},
		// The cluster's own files and the WAL a run keeps (min_wal_size is
		// a floor for recycling, not made ahead).
		ServerDisk:    func(uint64) uint64 { return 256 << 20 },
		CheckSettings: checkSettings,
		CheckServer: func(cfg engine.Config) error {
			bin, err := findBinaries(cfg.Options[k.BinFlag], k.BinFlag)
			if err != nil {
				return err
			}
			return bin.CheckSettingNames(cfg.Settings)
		},
		Managed: []engine.Managed{{Title: k.Title, Pattern: k.Dirs.Data + "*", Remove: k.Dirs.Remove, Dir: k.Dirs.Data,
			Holds: "the managed " + k.Title + " instance, its standbys in PATH/" + k.Dirs.Replica + "K"}},
		RemoveStaleSockets: RemoveStaleSockets,
		EphemeralSettings:  []string{"port", "unix_socket_directories"},
		Standbys:           &engine.Standbys{What: k.Title + " streaming replication", SyncModes: SyncModes, Settings: ReplicaSettings},
		Words:              words,
	}
	if k.BinFlag != "" {
		d.Options = []engine.Option{{Flag: k.BinFlag, Key: strings.ReplaceAll(k.BinFlag, "-", "_"), Role: "names " + k.Title + "'s binaries",
			Usage: "directory of the " + k.Title + " server binaries, or a major version installed here such as 15 (default: pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)"}}
	}
	return d
}

// words are PostgreSQL's terms in reports.
var words = terms.Words{
	Waits:        "Database time per wait event, from pg_stat_activity samples (the ASH idea); seconds = samples × the time a sample stands for (the sampling interval, or the samples' mean spacing where a busy machine kept them further apart); \"CPU\" is an active backend with no wait event. Avg ms comes from the server's counters where they give it.",
	Transactions: "pg_stat_database",
	Log:          "WAL",
	Counters: []terms.Counter{{Field: "active_sessions_avg", Head: "active sessions"}, {Field: "blks_read", Head: "blocks read"},
		{Field: "hit_pct", Head: "hit %"}, {Field: "data_file_read_avg_ms", Head: "data file read ms"}, {Field: "wal_write_avg_ms", Head: "WAL write ms"},
		{Field: "wal_sync_avg_ms", Head: "WAL sync ms"}, {Field: "checkpoints", Head: "checkpoints"}},
	StandbyLag: "pg_stat_replication",
	WaitKind:   waitKind,
}

// waitKind is what a pg_stat_activity wait means to the verdict: the WAL's
// I/O (WalSync from 17) and waits for another backend's WAL write are the
// WAL's, apart from the data files' I/O; locks and LWLocks stay apart.
func waitKind(class, event string) (string, terms.WaitKind) {
	switch {
	case class == "CPU":
		return class, terms.OnCPU
	case class == "IO" && strings.HasPrefix(strings.ToUpper(event), "WAL"), class == "LWLock" && strings.HasPrefix(event, "WALWrite"):
		return "WAL", terms.CommitWait
	case class == "IO":
		return class, terms.StorageWait
	case class == "Lock", class == "LWLock":
		return class, terms.LockWait
	}
	return class, terms.OtherWait
}

// Open prepares k's engine as cfg says; it starts nothing.
func Open(ctx context.Context, k Kind, cfg engine.Config) (*Target, error) {
	return Prepare(ctx, TargetConfig{Kind: k, DSN: cfg.DSN, Path: cfg.Path, PGBin: cfg.Options[k.BinFlag], RunAs: cfg.RunAs, DBCache: cfg.DBCache,
		MaxConnections: cfg.MaxConnections, ServerLog: cfg.ServerLog, Cgroup: cfg.Cgroup, Settings: cfg.Settings, WALPath: cfg.WALPath,
		Replicas: ReplicaConfig{N: cfg.Replicas, Sync: cfg.Sync, Path: cfg.ReplicaPath}, DataChecksums: cfg.DataChecksums})
}

// checkSettings refuses the settings calibra owns: the managed
// instance's access and its files.
func checkSettings(settings map[string]string) error {
	var owned []string
	for k := range settings {
		if slices.Contains(ManagedSettings, k) {
			owned = append(owned, k)
		}
	}
	if len(owned) == 0 {
		return nil
	}
	slices.Sort(owned)
	return fault.Input("leave it to calibra, which keeps the managed instance reachable only through its private socket",
		"the engine setting %s is calibra's own", strings.Join(owned, ", "))
}

// memoryBytes reads a memory size as shared_buffers does (a number of
// 8 kB buffers, or with kB, MB, GB or TB), reporting whether it is one.
func memoryBytes(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if i == 0 || err != nil {
		return 0, false
	}
	unit := map[string]uint64{"": 8 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[strings.ToUpper(s[i:])]
	if unit == 0 || n > math.MaxUint64/unit {
		return 0, false
	}
	return n * unit, true
}
