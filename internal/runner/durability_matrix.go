package runner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/results"
)

// matrixCuts are the torn-write matrix's cuts: a device that tears at
// 4 KiB (the unit of many SSDs and of the page cache) and one that
// writes 16 KiB whole (InnoDB's page; twice PostgreSQL's).
var matrixCuts = []struct {
	name string
	unit int64
}{{"torn 4 KiB", 4 << 10}, {"atomic 16 KiB", 16 << 10}}

// checkMatrix refuses what the matrix cannot run with.
func checkMatrix(p *Problems, c *Config, d Durability) {
	if c.Lab == "" {
		p.Add("give --lab, e.g. --lab hdd", "--matrix tears writes at the lab's power cut, and there is no --lab")
	} else if parts, err := lab.Parse(c.Lab); err == nil && !parts.Served() {
		p.Add("drop rate, error_rate and cache=writeback|unsafe from --lab", "--matrix needs the lab's own server, which tears writes, and %q is nbdkit's", c.Lab)
	}
	if d.PageProtection != "on" {
		p.Add("drop --page-protection", "--matrix runs page protection on and off itself")
	}
	if d.FsyncOff {
		p.Add("drop --unsafe-fsync-off", "--matrix audits the engine's torn-page protection, not its commits")
	}
}

// withTorn is a lab spec whose cut tears at unit.
func withTorn(spec string, unit int64) string {
	sep := ","
	if !strings.Contains(spec, ":") {
		sep = ":"
	}
	return fmt.Sprintf("%s%storn=%d", spec, sep, unit)
}

// runMatrix runs cfg.Cycles cycles for each page protection setting
// against each cut, on a fresh database whenever the last combination
// left it damaged, and sums them into body.
func runMatrix(ctx context.Context, h *auditHost, cfg durability.Config, body *results.Durability) error {
	prot, ok := h.s.target.(durability.Protector)
	if !ok {
		return fmt.Errorf("%s", engine.NotSupported(h.s.target, "turning off torn-page protection"))
	}
	body.Clients, body.LoadS = cfg.Clients, cfg.Load.Seconds()
	damaged := false
	for _, on := range []bool{true, false} {
		for _, cut := range matrixCuts {
			setting := prot.PageProtection(on)
			h.cell = fmt.Sprintf("%s-%dk-", strings.ReplaceAll(setting, "=", "-"), cut.unit>>10)
			h.s.prog.Phase("matrix: %s against the %s cut, %d cycles", setting, cut.name, cfg.Cycles)
			if err := matrixRestart(ctx, h, cut.unit, damaged, &cfg); err != nil {
				return fmt.Errorf("matrix, %s against the %s cut: %w", setting, cut.name, err)
			}
			cell := results.Durability{}
			cellCfg := cfg
			cellCfg.Journal = h.s.dir.File("raw", "durability-acks-"+strings.TrimSuffix(h.cell, "-")+".txt")
			cellCfg.CutInCheckpoint = true
			if err := durability.Run(ctx, cellCfg, h, &cell); err != nil {
				return err
			}
			failed := slices.ContainsFunc(cell.PerCycle, func(c results.DurabilityCycle) bool { return c.RecoveryError != "" })
			damaged = failed || cell.PagesDamaged > 0
			addCell(body, &cell, setting, cut.name, cut.unit)
			body.Journal = cell.Journal
		}
	}
	body.CutDuring = "checkpoint"
	body.Findings = matrixFindings(body.Matrix)
	return nil
}

// matrixRestart brings the server down cleanly, the lab back with a cut
// of unit, a new database when the last combination damaged it, and the
// server up with its next protection setting.
func matrixRestart(ctx context.Context, h *auditHost, unit int64, fresh bool, cfg *durability.Config) error {
	if err := h.s.target.Stop(); err != nil && !fresh {
		return err
	}
	// What the server wrote is on the platter: the cut below loses nothing.
	if err := limits.SyncFS(h.stack.Mount); err != nil {
		return err
	}
	h.stack.PowerCut()
	h.stack.Parts.TornUnit = unit
	if err := h.stack.Restart(ctx); err != nil {
		return err
	}
	if fresh {
		h.s.prog.Phase("matrix: the last combination damaged the database: a new one")
		if err := server.RemoveDir(h.data.Local().DataDir); err != nil {
			return err
		}
	}
	if _, err := h.s.target.Start(ctx, h.s.env.Group); err != nil {
		return err
	}
	if err := h.s.updateEngine(); err != nil {
		return err
	}
	return auditBuild(ctx, h.s, cfg)
}

// addCell adds one combination's cycles to the matrix and the totals.
func addCell(body, cell *results.Durability, setting, cut string, unit int64) {
	c := results.DurabilityCell{Protection: setting, Cut: cut, TornUnit: unit, Cycles: cell.Cycles, Acknowledged: cell.Acknowledged,
		LostAcknowledged: cell.LostAcknowledged, UnverifiableAcknowledged: cell.UnverifiableAcknowledged, PagesDamaged: cell.PagesDamaged,
		Outcomes: cell.Outcomes, Note: cell.Note}
	for _, cy := range cell.PerCycle {
		c.WrittenBytes += cy.WrittenBytes
		cy.Cell = setting + ", " + cut
		body.PerCycle = append(body.PerCycle, cy)
		if cy.RecoveryS != nil && (body.RecoveryS == nil || *cy.RecoveryS > *body.RecoveryS) {
			v := *cy.RecoveryS
			body.RecoveryS = &v
		}
	}
	if c.Acknowledged > 0 {
		v := float64(c.WrittenBytes) / float64(c.Acknowledged)
		c.BytesPerCommit = &v
	}
	body.Matrix = append(body.Matrix, c)
	body.Cycles += cell.Cycles
	body.Acknowledged += cell.Acknowledged
	body.LostAcknowledged += cell.LostAcknowledged
	body.UnverifiableAcknowledged += cell.UnverifiableAcknowledged
	body.PresentAcknowledged += cell.PresentAcknowledged
	body.CommittedUnacknowledged += cell.CommittedUnacknowledged
	body.PagesDamaged += cell.PagesDamaged
	body.PageCheck = cmp.Or(cell.PageCheck, body.PageCheck)
	if body.Outcomes == nil {
		body.Outcomes = map[string]int{}
	}
	for k, n := range cell.Outcomes {
		body.Outcomes[k] += n
	}
}

// matrixFindings says in a sentence each what the matrix means: whether
// this storage tore a page with the protection off, whether the atomic
// cut needed it, and what the protection cost in writes.
func matrixFindings(m []results.DurabilityCell) []string {
	find := func(on bool, unit int64) *results.DurabilityCell {
		for i := range m {
			if protected(m[i].Protection) == on && m[i].TornUnit == unit {
				return &m[i]
			}
		}
		return nil
	}
	var out []string
	for _, cut := range matrixCuts {
		off, on := find(false, cut.unit), find(true, cut.unit)
		if off == nil || on == nil {
			continue
		}
		name, _, _ := strings.Cut(off.Protection, "=")
		switch {
		case off.PagesDamaged > 0 || off.LostAcknowledged > 0 || off.UnverifiableAcknowledged > 0:
			out = append(out, fmt.Sprintf("Under the %s cut this storage left %s and %s lost in %s with %s%s: keep %s on.",
				cut.name, count(off.PagesDamaged, "damaged page"), count(off.LostAcknowledged, "acknowledged commit"), count(int64(off.Cycles), "cut"),
				off.Protection, refusals(off), name))
		case off.Cycles < conclusiveCuts:
			out = append(out, fmt.Sprintf("Under the %s cut no page was damaged and no acknowledged commit lost in %s with %s, too few to tell: damage that comes in %d of 10 cuts (as a page damage did without the protection on this lab, docs/lab.md) shows in %s with a chance of %.0f%% only; run --cycles %d or more to see it at %.0f%%.",
				cut.name, count(int64(off.Cycles), "cut"), off.Protection, damageIn10, count(int64(off.Cycles), "cut"), 100*seen(off.Cycles), conclusiveCuts, 100*seen(conclusiveCuts)))
		default:
			out = append(out, fmt.Sprintf("Under the %s cut no page was damaged and no acknowledged commit lost in %d cuts with %s, which would show damage that comes in %d of 10 cuts with a chance of %.0f%%: %s did not change the outcome here.",
				cut.name, off.Cycles, off.Protection, damageIn10, 100*seen(off.Cycles), name))
		}
		if on.PagesDamaged > 0 || on.LostAcknowledged > 0 || on.UnverifiableAcknowledged > 0 {
			out = append(out, fmt.Sprintf("With %s under the %s cut it still lost %s and damaged %s%s: the protection did not hold.",
				on.Protection, cut.name, count(on.LostAcknowledged, "acknowledged commit"), count(on.PagesDamaged, "page"), refusals(on)))
		}
	}
	var onB, offB, onN, offN float64
	for _, c := range m {
		if c.BytesPerCommit == nil {
			continue
		}
		if protected(c.Protection) {
			onB, onN = onB+float64(c.WrittenBytes), onN+float64(c.Acknowledged)
		} else {
			offB, offN = offB+float64(c.WrittenBytes), offN+float64(c.Acknowledged)
		}
	}
	if onN > 0 && offN > 0 && offB > 0 {
		on, off := onB/onN, offB/offN
		out = append(out, fmt.Sprintf("The protection cost %.1f KiB written per acknowledged commit against %.1f KiB without it (%+.0f%%), in the same run's loads.", on/1024, off/1024, 100*(on/off-1)))
	}
	return out
}

// damageIn10 is how often a cut damaged a page without the protection
// where it mattered (PostgreSQL, 4 KiB tears: 6 of 10, docs/lab.md); a
// matrix concludes that the protection made no difference only from
// conclusiveCuts undamaged cuts, which would have seen such damage with a
// chance of 97%.
const (
	damageIn10     = 6
	conclusiveCuts = 4
)

// seen is the chance that n cuts show damage that comes in damageIn10 of
// 10 at least once.
func seen(n int) float64 { return 1 - math.Pow(1-damageIn10/10.0, float64(n)) }

// protected says whether a setting such as full_page_writes=on or
// innodb_doublewrite=OFF turns the protection on.
func protected(setting string) bool { return strings.HasSuffix(strings.ToLower(setting), "=on") }

// count is n and what, plural when n is not 1.
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// refusals says how many of a combination's acknowledged commits could
// not be verified, as the server refused to recover or to read its data;
// "" when none.
func refusals(c *results.DurabilityCell) string {
	if c.UnverifiableAcknowledged == 0 {
		return ""
	}
	return fmt.Sprintf(" (the server refused to recover or to read its data, so %s could not be verified)", count(c.UnverifiableAcknowledged, "acknowledged commit"))
}
