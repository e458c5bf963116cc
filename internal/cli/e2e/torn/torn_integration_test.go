//go:build integration

package torn

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
)

// TestTornPagesNeedProtection, on every engine: on an hdd whose power cut
// tears each write in flight at a 4 KiB boundary (the cut during a
// checkpoint), the engine without its torn-page protection (PostgreSQL's
// full_page_writes, InnoDB's doublewrite buffer) is left with a damaged
// page (seed 1 tore one on each here on 2026-11-28; which writes are in
// flight varies from run to run, the seed only chooses where each is
// torn), the torn writes recorded in the run directory; with the
// protection on it loses no acknowledged commit and no page. (Without
// it under a cut that keeps 16 KiB whole both are durable too: measured
// with --matrix in docs/lab.md, and the lab's atomic cut unit-tested in
// internal/lab; a third audit an engine would cost the suite 25 s.)
func TestTornPagesNeedProtection(t *testing.T) {
	t.Parallel()
	clitest.RequireLab(t)
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clitest.RequireEngine(t, name)
			torn := []string{"--engine", name, "--lab", "hdd:torn=4k,seed=1,delay=1ms,size=1G"}
			t.Run("protection off", func(t *testing.T) {
				t.Parallel()
				protectionOff(t, torn)
			})
			t.Run("protection on", func(t *testing.T) {
				t.Parallel()
				code, d := clitest.RunAudit(t, append(torn, "--cycles", "1")...)
				if code != 0 || d.Cycles != 1 || d.LostAcknowledged != 0 || d.PagesDamaged != 0 || d.CutDuring != "checkpoint" || d.PageCheck == "" {
					t.Fatalf("exit %d, %d cycles, %d lost, %d pages damaged, cut during %q, page check %q: %+v",
						code, d.Cycles, d.LostAcknowledged, d.PagesDamaged, d.CutDuring, d.PageCheck, d.PerCycle)
				}
			})
		})
	}
}

// minTorn are the writes torn over the cuts below which an undamaged run
// proves nothing either way: runs here tore 26 writes over three cuts
// (2026-11-29) and 10 over two (beside the whole suite, 2026-12-06, whose
// later cuts found no write in flight) without damaging a page, while a
// damaging run damages at its first cut whatever this says.
const minTorn = 30

// protectionOff runs up to five cuts without the protection: the audit
// stops at the first that damages a page (35 of 36 runs, the first), so
// the cuts past it cost nothing, and a torn write need not damage one (a
// log write, whose checksum ends the replay there; a tear at a page's
// edge; a page the redo log rebuilds): the failing run tore 26 writes
// over three cuts, one of which came before the checkpoint wrote, and
// damaged nothing.
func protectionOff(t *testing.T, torn []string) {
	code, d := clitest.RunAudit(t, append(torn, "--page-protection", "off", "--cycles", "5", "--threshold", "durability.pages_damaged == 0")...)
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
		t.Skipf("%d writes were in flight and torn at the %d cuts, fewer than %d: inconclusive on this busy machine; run alone: go test -tags integration -run TestTornPagesNeedProtection ./internal/cli/e2e/torn/", tore, d.Cycles, minTorn)
	}
	if d.PagesDamaged == 0 || tore == 0 || !strings.HasSuffix(strings.ToLower(d.PageProtection), "=off") {
		t.Fatalf("exit %d, %d cycles, %d writes torn, %d pages damaged (%s): a torn cut without the protection damaged no page: %+v",
			code, d.Cycles, tore, d.PagesDamaged, d.PageProtection, d.PerCycle)
	}
	// The damage is named as such, its commits split by what could be
	// checked, and the threshold on it fails the run whatever the cycles
	// left (the audit stops at the damage).
	for _, c := range d.PerCycle {
		if c.PresentAcknowledged+c.LostAcknowledged+c.UnverifiableAcknowledged != c.Acknowledged {
			t.Errorf("cycle %d: %d present, %d missing, %d not verifiable of %d acknowledged", c.Cycle, c.PresentAcknowledged, c.LostAcknowledged, c.UnverifiableAcknowledged, c.Acknowledged)
		}
		if c.PagesDamaged > 0 && c.Torn != nil && c.Torn.Torn > 0 && c.Outcome != "torn-page" {
			t.Errorf("cycle %d tore %d writes and damaged %d pages, but is %q, not torn-page", c.Cycle, c.Torn.Torn, c.PagesDamaged, c.Outcome)
		}
	}
	if code != fault.ExitThreshold {
		t.Errorf("exit %d with %d pages damaged and a threshold on them, want %d", code, d.PagesDamaged, fault.ExitThreshold)
	}
	t.Logf("%d cycles, %d writes torn, %d pages damaged: %v", d.Cycles, tore, d.PagesDamaged, d.Outcomes)
}
