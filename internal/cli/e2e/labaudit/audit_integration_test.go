//go:build integration

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
		// The cache's loss shows as commits missing, or as a database that
		// cannot be read back (its commits not verifiable): both named.
		code, d := audit(t, flash+",cache=flash-volatile", "--cycles", "1", "--threshold", "durability.unverifiable_acknowledged == 0")
		if code != fault.ExitThreshold || d.LostAcknowledged+d.UnverifiableAcknowledged == 0 {
			t.Fatalf("exit %d (want %d), %d acknowledged, %d missing, %d not verifiable: the harness saw no loss from a cache that lies",
				code, fault.ExitThreshold, d.Acknowledged, d.LostAcknowledged, d.UnverifiableAcknowledged)
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
