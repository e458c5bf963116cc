package mariadb

import (
	"context"
	"io"
	"log"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

// Name is the engine's name in results.json and --engine.
const Name = "mariadb"

func init() {
	// The driver would print to stderr, over calibra's progress display,
	// what it also returns as errors (and a session a reset ended).
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	engine.Register(Name, func(ctx context.Context, cfg engine.Config) (engine.Engine, error) {
		tc := TargetConfig{DSN: cfg.DSN, Path: cfg.Path, Bin: cfg.Bin, RunAs: cfg.RunAs, DBCache: cfg.DBCache,
			MaxConnections: cfg.MaxConnections, ServerLog: cfg.ServerLog, Cgroup: cfg.Cgroup, Settings: cfg.Settings, WALPath: cfg.WALPath,
			Galera: cfg.Galera}
		if cfg.Galera > 0 {
			return PrepareCluster(ctx, tc)
		}
		return Prepare(ctx, tc)
	})
}

// The capabilities MariaDB has.
var (
	_ engine.Engine             = (*Target)(nil)
	_ engine.ColdRestarter      = (*Target)(nil)
	_ engine.Resetter           = (*Target)(nil)
	_ engine.Crasher            = (*Target)(nil)
	_ engine.TransactionCounter = (*Target)(nil)
)

// Name is "mariadb".
func (t *Target) Name() string { return Name }

// Describe is the server's version and non-default settings, and the
// target, its DSN redacted.
func (t *Target) Describe() results.Engine { return t.Info }

// Local is the managed instance's data and redo log directories; nil for
// a DSN.
func (t *Target) Local() *engine.Local {
	if t.Managed == nil {
		return nil
	}
	return &engine.Local{DataDir: t.Managed.DataDir, LogDir: t.Managed.RedoDir(), Repairs: t.Repairs}
}

// Kill kills the managed server at once, as a crash would.
func (t *Target) Kill() {
	if t.Managed != nil {
		t.Managed.Kill()
	}
}

// unsafeCommits are InnoDB's settings that acknowledge a commit before
// its redo is on the storage: the log written and flushed about once a
// second, not at each commit.
var unsafeCommits = map[string]string{"innodb_flush_log_at_trx_commit": "0"}

// UnsafeCommits makes the next start run with unsafeCommits: the
// power-loss audit's calibration (durability.Calibrator).
func (t *Target) UnsafeCommits() string {
	t.Managed.overrides = unsafeCommits
	return "innodb_flush_log_at_trx_commit=0"
}
