package report

import (
	"fmt"
	"strconv"

	"github.com/calibra-bench/calibra/internal/results"
)

// labChain is the lab's stack in words, "" without a lab.
func labChain(l *results.Lab) string {
	if l == nil {
		return ""
	}
	return l.Spec + ": " + l.Chain
}

func (b *builder) durability(d *results.Durability) {
	b.windowCard("acknowledged commits lost", results.Int(d.LostAcknowledged), "", "after "+strconv.Itoa(d.Cycles)+" power cuts")
	if d.UnverifiableAcknowledged > 0 {
		b.windowCard("acknowledged commits not verifiable", results.Int(d.UnverifiableAcknowledged), "", "the database did not come back, or could not be read")
	}
	switch {
	case d.PowerCut == "server":
		b.sec.Notes = append(b.sec.Notes, "Only the server was killed (no --lab): the OS page cache survived, so this tested the database's crash recovery, not the storage.")
	default:
		b.sec.Notes = append(b.sec.Notes, "Each power cut killed the server and the emulated storage's volatile cache at once; the file system was checked and mounted again and the server recovered.")
	}
	if d.Calibration {
		b.sec.Notes = append(b.sec.Notes, "Calibration: the server ran with commits not flushed ("+d.UnsafeSettings+"), so losses are expected; they prove the audit sees a loss.")
	}
	if len(d.Matrix) > 0 {
		b.matrix(d)
	}
	rows := make([][]Cell, 0, len(d.PerCycle))
	for _, c := range d.PerCycle {
		cycle := strconv.Itoa(c.Cycle)
		if c.Cell != "" {
			cycle = c.Cell + ": " + cycle
		}
		rows = append(rows, cells(cycle, c.Outcome, results.Int(c.Acknowledged), results.Int(c.PresentAcknowledged), results.Int(c.LostAcknowledged),
			results.Int(c.UnverifiableAcknowledged), results.Int(c.CommittedUnacknowledged),
			results.Int(c.PagesDamaged), tornCell(c.Torn), results.NumPtr(c.RecoveryS), c.Fsck+c.RecoveryError))
	}
	b.table(Table{Caption: "Power cuts", Headline: len(d.Matrix) == 0, Head: []string{"cycle", "outcome", "acknowledged", "present", "missing (violation)",
		"not verifiable", "in flight, kept",
		"pages damaged", "writes torn (seed, record)", "recovery s", "file system check / recovery error"}, Rows: rows})
	if d.PageCheck != "" {
		b.note("Pages checked after each recovery: %s.", d.PageCheck)
	}
	if f := d.Flush; f != nil {
		b.note("Flush probe: %s fsyncs a second at queue depth 1 (%s ms each): %s", results.Num(f.FsyncsPerS), results.Num(f.LatencyMsMean), f.Verdict)
	}
	if d.Note != "" {
		b.note("%s", d.Note)
	}
}

// tornCell is what a torn cut did, "" for a whole-or-absent one.
func tornCell(t *results.TornCut) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("%d of %d (seed %d, %s)", t.Torn, t.InFlight, t.Seed, t.Record)
}

// matrix is the torn-write matrix: each protection setting against each
// cut, and what it means.
func (b *builder) matrix(d *results.Durability) {
	rows := make([][]Cell, 0, len(d.Matrix))
	for _, c := range d.Matrix {
		perCommit := ""
		if c.BytesPerCommit != nil {
			perCommit = results.Num(*c.BytesPerCommit / 1024)
		}
		rows = append(rows, cells(c.Protection, c.Cut, strconv.Itoa(c.Cycles), results.Int(c.Acknowledged), results.Int(c.LostAcknowledged),
			results.Int(c.PagesDamaged), results.Num(float64(c.WrittenBytes)/(1<<20)), perCommit))
	}
	b.table(Table{Caption: "Torn-write matrix", Headline: true, Head: []string{"page protection", "cut", "cycles", "acknowledged", "lost (violation)",
		"pages damaged", "written MiB", "KiB written per commit"}, Rows: rows})
	for _, f := range d.Findings {
		b.note("%s", f)
	}
}
