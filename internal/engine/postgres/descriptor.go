package postgres

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
)

// Name is the engine's name in results.json and --engine.
const Name = "postgresql"

// binFlag is --pg-bin, the server binaries of the managed instance.
const binFlag = "pg-bin"

func init() {
	engine.Register(Descriptor(Name, "PostgreSQL", true, func(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
		return Open(ctx, cfg)
	}))
}

// Descriptor is PostgreSQL's description under name and title, opened by
// open: a test engine that wraps this package registers its own.
func Descriptor(name, title string, isDefault bool, open engine.Opener) engine.Descriptor {
	return engine.Descriptor{
		Name: name, Title: title, Default: isDefault, Open: open,
		DSNSchemes:  []string{"postgres", "postgresql"},
		DSNExample:  "postgres://user@host:5432/db",
		DSNPassword: "PGPASSWORD or ~/.pgpass",
		Cache: engine.Cache{Setting: "shared_buffers", Default: DefaultDBCache, Parse: memoryBytes,
			Min: 16 * 8 << 10, Example: "256MB or 8GB"},
		CheckSettings: checkSettings,
		CheckServer: func(cfg engine.Config) error {
			bin, err := FindBinaries(cfg.Options[binFlag])
			if err != nil {
				return err
			}
			return bin.CheckSettingNames(cfg.Settings)
		},
		Managed: []engine.Managed{{Title: title, Pattern: DataDirName + "*", Remove: Remove, Dir: DataDirName,
			Holds: "the managed " + title + " instance, its standbys in PATH/" + ReplicaDirPrefix + "K"}},
		RemoveStaleSockets: RemoveStaleSockets,
		EphemeralSettings:  []string{"port", "unix_socket_directories"},
		Standbys:           &engine.Standbys{What: title + " streaming replication", SyncModes: SyncModes, Settings: ReplicaSettings},
		Options: []engine.Option{{Flag: binFlag, Key: "pg_bin", Role: "names " + title + "'s binaries",
			Usage: "directory of the " + title + " server binaries, or a major version installed here such as 15 (default: pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)"}},
	}
}

// Open prepares the engine as cfg says; it starts nothing.
func Open(ctx context.Context, cfg engine.Config) (*Target, error) {
	return Prepare(ctx, TargetConfig{DSN: cfg.DSN, Path: cfg.Path, PGBin: cfg.Options[binFlag], RunAs: cfg.RunAs, DBCache: cfg.DBCache,
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
