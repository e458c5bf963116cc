package mariadb

import (
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

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
	for k, v := range unsafeCommits {
		t.Managed.override(k, v)
	}
	return "innodb_flush_log_at_trx_commit=0"
}

// PageProtection makes the next start write each page twice through the
// doublewrite buffer (the default) or not: the power-loss audit's matrix
// (durability.Protector).
func (t *Target) PageProtection(on bool) string {
	v := map[bool]string{true: "ON", false: "OFF"}[on]
	t.Managed.override("innodb_doublewrite", v)
	return "innodb_doublewrite=" + v
}
