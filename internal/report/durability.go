package report

import (
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
	switch {
	case d.PowerCut == "server":
		b.sec.Notes = append(b.sec.Notes, "Only the server was killed (no --lab): the OS page cache survived, so this tested the database's crash recovery, not the storage.")
	default:
		b.sec.Notes = append(b.sec.Notes, "Each power cut killed the server and the emulated storage's volatile cache at once; the file system was checked and mounted again and the server recovered.")
	}
	if d.Calibration {
		b.sec.Notes = append(b.sec.Notes, "Calibration: the server ran with commits not flushed ("+d.UnsafeSettings+"), so losses are expected; they prove the audit sees a loss.")
	}
	rows := make([][]Cell, 0, len(d.PerCycle))
	for _, c := range d.PerCycle {
		rows = append(rows, cells(strconv.Itoa(c.Cycle), c.Outcome, results.Int(c.Acknowledged), results.Int(c.LostAcknowledged), results.Int(c.CommittedUnacknowledged),
			results.NumPtr(c.RecoveryS), c.Fsck+c.RecoveryError))
	}
	b.table(Table{Caption: "Power cuts", Headline: true, Head: []string{"cycle", "outcome", "acknowledged", "lost (violation)", "in flight, kept", "recovery s", "file system check / recovery error"}, Rows: rows})
	if f := d.Flush; f != nil {
		b.note("Flush probe: %s fsyncs a second at queue depth 1 (%s ms each): %s", results.Num(f.FsyncsPerS), results.Num(f.LatencyMsMean), f.Verdict)
	}
	if d.Note != "" {
		b.note("%s", d.Note)
	}
}
