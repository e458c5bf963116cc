package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

// The capabilities PostgreSQL has.
var (
	_ engine.Engine             = (*Target)(nil)
	_ engine.ColdRestarter      = (*Target)(nil)
	_ engine.Resetter           = (*Target)(nil)
	_ engine.Crasher            = (*Target)(nil)
	_ engine.TransactionCounter = (*Target)(nil)
	_ engine.Replicator         = (*Target)(nil)
)

// Name is "postgresql".
func (t *Target) Name() string { return Name }

// Describe is the server's version and non-default settings, and the
// target, its DSN redacted.
func (t *Target) Describe() results.Engine { return t.Info }

// Local is the managed instance's data and WAL directories; nil for a DSN.
func (t *Target) Local() *engine.Local {
	if t.Managed == nil {
		return nil
	}
	return &engine.Local{DataDir: t.Managed.DataDir, LogDir: t.Managed.WALDir(), Repairs: t.Repairs}
}

// Kill kills the managed server at once, as a crash would.
func (t *Target) Kill() {
	if t.Managed != nil {
		t.Managed.Kill()
		t.replicas.kill()
	}
}

// Transactions is pg_stat_database's commits plus rollbacks of calibra's
// database, with the caller's own statistics published first; other
// backends publish theirs at most a second late.
func (t *Target) Transactions(ctx context.Context) (int64, error) {
	var conn *pgx.Conn
	var err error
	if t.Managed != nil {
		conn, err = t.maintenance(ctx) // outside the counted database
	} else {
		conn, err = pgx.ConnectConfig(ctx, t.ConnConfig())
	}
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, `SELECT coalesce(sum(xact_commit + xact_rollback), 0)::bigint FROM pg_stat_database WHERE datname = $1`, t.conn.Database).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read the transaction counter: %w", err)
	}
	return n, nil
}

// UnsafeCommits makes the next start run with fsync=off, which
// acknowledges commits the storage may not hold: the power-loss audit's
// calibration (durability.Calibrator). Describe records it.
func (t *Target) UnsafeCommits() string {
	t.Managed.override("fsync", "off")
	return "fsync=off"
}

// PageProtection makes the next start write full page images (the
// default) or not: the power-loss audit's matrix (durability.Protector).
func (t *Target) PageProtection(on bool) string {
	v := map[bool]string{true: "on", false: "off"}[on]
	t.Managed.override("full_page_writes", v)
	return "full_page_writes=" + v
}
