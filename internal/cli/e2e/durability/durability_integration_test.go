//go:build integration

package durability

import (
	"slices"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestDurabilityOnMariaDB: the audit reaches MariaDB through the engine
// seam as it does PostgreSQL. With InnoDB's log flushed about once a
// second (the calibration) it loses some acknowledged commits, or the
// harness could not see a loss on this engine. (That MariaDB loses none
// with its commits flushed is e2e/torn's, under a harsher cut: a flash
// cache audit here as well cost the suite a MariaDB made on a lab.)
func TestDurabilityOnMariaDB(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	clitest.RequireMariaDB(t)
	// A 1 ms platter, as the cut and not the platter's speed is the point
	// (the 8 ms one tripled the audit's time, its page checks reading the
	// tables back from the platter); 1 GiB holds the 96 MiB redo log.
	const flash = "hdd+flash-cache:size=1G,cache_size=256M,delay=1ms"
	t.Run("calibration", func(t *testing.T) {
		t.Parallel()
		code, d := clitest.RunAudit(t, "--engine", "mariadb", "--lab", flash, "--unsafe-fsync-off")
		lost := slices.ContainsFunc(d.PerCycle, func(c results.DurabilityCycle) bool { return c.Outcome == string(durability.LostAcknowledged) })
		if code != fault.ExitThreshold || d.LostAcknowledged == 0 || !lost || !strings.Contains(d.UnsafeSettings, "innodb_flush_log_at_trx_commit=0") {
			t.Fatalf("exit %d (want %d), %d acknowledged, %d lost, outcomes %v, settings %q: the harness saw no loss with commits not flushed",
				code, fault.ExitThreshold, d.Acknowledged, d.LostAcknowledged, d.Outcomes, d.UnsafeSettings)
		}
	})
}

// TestAFailedRecoveryIsAFinding: a cache that ignores FLUSH and dies at
// the cut takes what the server wrote since the lab was built. The
// recovery that fails is a finding of its class, its acknowledged commits
// not verifiable (not counted missing); the audit does not make a new
// database in its place, stops there saying so, and the run fails on the
// finding (exit 1: the threshold names only missing commits), not on the
// cycle left unrun.
func TestAFailedRecoveryIsAFinding(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	code, d := clitest.RunAudit(t, "--lab", "hdd:cache=unsafe,size=2G,delay=1ms")
	failed := []string{string(durability.Corrupt), string(durability.FilesGone), string(durability.NoRestart)}
	if code != fault.ExitRuntime || d.Cycles != 1 || len(d.PerCycle) != 1 {
		t.Fatalf("exit %d (want %d), %d cycles (want 1 of 2): %s", code, fault.ExitRuntime, d.Cycles, d.Note)
	}
	c := d.PerCycle[0]
	if !slices.Contains(failed, c.Outcome) || c.RecoveryError == "" || (c.RecoveryS == nil) != strings.Contains(d.Note, "did not recover") ||
		c.LostAcknowledged != 0 || c.UnverifiableAcknowledged != c.Acknowledged || c.PresentAcknowledged != 0 ||
		!strings.Contains(d.Note, "cycle 2 did not run") {
		t.Fatalf("outcome %q, error %q, recovery %v, %d of %d missing, %d not verifiable, %d present, note %q", c.Outcome, c.RecoveryError, c.RecoveryS,
			c.LostAcknowledged, c.Acknowledged, c.UnverifiableAcknowledged, c.PresentAcknowledged, d.Note)
	}
	t.Logf("cycle 1: %s: %s", c.Outcome, c.RecoveryError)
}
