package labaudit

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestDurabilityOnALab: with fsync on, the non-volatile flash cache
// (journaled, surviving the cut) loses no acknowledged New-Order or
// Payment and the TPC-C consistency conditions hold after each recovery; the same
// cache made volatile, still acknowledging FLUSH, must lose some, and so
// must the fsync=off calibration, or the harness could not see a loss.
func TestDurabilityOnALab(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	// Each audit on a lab of its own, side by side: the three wait mostly
	// on the emulated platter, not the CPU.
	audit := func(t *testing.T, spec string, extra ...string) (int, *results.Durability) {
		return clitest.RunAudit(t, append([]string{"--lab", spec}, extra...)...)
	}
	const flash = "hdd+flash-cache:size=1G,cache_size=256M,delay=1ms" // the cut, not the platter's speed, is the point
	t.Run("fsync on", func(t *testing.T) {
		t.Parallel()
		code, d := audit(t, flash)
		if code != 0 || d.Cycles != 2 || d.Acknowledged == 0 || d.LostAcknowledged != 0 || d.RecoveryS == nil {
			t.Fatalf("exit %d, %d cycles, %d acknowledged, %d lost, recovery %v", code, d.Cycles, d.Acknowledged, d.LostAcknowledged, d.RecoveryS)
		}
		for _, c := range d.PerCycle {
			if c.Consistency == nil || !c.Consistency.OK {
				t.Fatalf("cycle %d: the TPC-C consistency conditions after the recovery: %+v", c.Cycle, c.Consistency)
			}
		}
	})
	t.Run("volatile flash cache", func(t *testing.T) {
		t.Parallel()
		code, d := audit(t, flash+",cache=flash-volatile", "--cycles", "1")
		if code != fault.ExitThreshold || d.LostAcknowledged == 0 {
			t.Fatalf("exit %d (want %d), %d acknowledged, %d lost: the harness saw no loss from a cache that lies",
				code, fault.ExitThreshold, d.Acknowledged, d.LostAcknowledged)
		}
	})
	t.Run("calibration", func(t *testing.T) {
		t.Parallel()
		// A volatile cache that honours FLUSH (nbdkit's writeback): only a
		// FLUSH keeps a write, and fsync=off sends none but the file
		// system's journal commits. The flash cache keeps whatever the
		// kernel wrote back on its own, and twice in nine busy runs (8
		// commits acknowledged in the starved load) it had them all.
		code, d := audit(t, "hdd:size=1G,cache=writeback,delay=1ms", "--unsafe-fsync-off", "--cycles", "1")
		if code != fault.ExitThreshold || d.LostAcknowledged == 0 || !d.Calibration {
			t.Fatalf("exit %d (want %d), %d acknowledged, %d lost: the harness saw no loss with fsync=off",
				code, fault.ExitThreshold, d.Acknowledged, d.LostAcknowledged)
		}
	})
}

// TestTornPagesNeedProtection: on an hdd whose power cut tears each write
// in flight at a 4 KiB boundary (the cut during a checkpoint), PostgreSQL
// without full_page_writes is left with a damaged page (seed 1 tore one
// here on 2026-11-28; which writes are in flight varies from run to run,
// the seed only chooses where each is torn), the torn writes recorded in
// the run directory; with full_page_writes on it loses no acknowledged
// commit and no page.
func TestTornPagesNeedProtection(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	const torn = "hdd:torn=4k,seed=1,delay=1ms,size=1G"
	const minTorn = 10
	t.Run("full_page_writes off", func(t *testing.T) {
		t.Parallel()
		// Up to three cuts: the audit stops at the first that damages a
		// page (most runs, the first), and a torn write need not damage one
		// (a WAL write, whose CRC ends the replay there; a tear at a page's
		// edge), so two durable cycles of five torn writes each happened.
		code, d := clitest.RunAudit(t, "--lab", torn, "--page-protection", "off", "--cycles", "3")
		tore := 0
		for _, c := range d.PerCycle {
			if c.Torn != nil && c.Torn.Record != "" {
				tore += c.Torn.Torn
			}
		}
		// Cuts that found few writes in flight tear too little to prove
		// anything either way: other loads slowed the checkpoint they wait
		// for (beside a busy loop and three other test packages, 0 and 1
		// writes torn in two cycles; alone, some 40 in one).
		if tore < minTorn && d.PagesDamaged == 0 && code == 0 {
			t.Skipf("%d writes were in flight and torn at the %d cuts, fewer than %d: inconclusive on this busy machine; run alone: go test -run TestTornPagesNeedProtection ./internal/cli/e2e/labaudit/", tore, d.Cycles, minTorn)
		}
		if d.PagesDamaged == 0 || tore == 0 || d.PageProtection != "full_page_writes=off" {
			t.Fatalf("exit %d, %d cycles, %d writes torn, %d pages damaged (%s): a torn cut without full_page_writes damaged no page: %+v",
				code, d.Cycles, tore, d.PagesDamaged, d.PageProtection, d.PerCycle)
		}
		t.Logf("%d cycles, %d writes torn, %d pages damaged: %v", d.Cycles, tore, d.PagesDamaged, d.Outcomes)
	})
	t.Run("full_page_writes on", func(t *testing.T) {
		t.Parallel()
		code, d := clitest.RunAudit(t, "--lab", torn, "--cycles", "1")
		if code != 0 || d.Cycles != 1 || d.LostAcknowledged != 0 || d.PagesDamaged != 0 || d.CutDuring != "checkpoint" || d.PageCheck == "" {
			t.Fatalf("exit %d, %d cycles, %d lost, %d pages damaged, cut during %q, page check %q: %+v",
				code, d.Cycles, d.LostAcknowledged, d.PagesDamaged, d.CutDuring, d.PageCheck, d.PerCycle)
		}
	})
}
