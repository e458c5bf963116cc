package report

import (
	"strings"
	"testing"

	_ "github.com/calibra-bench/calibra/internal/engines" // each engine's words, as the command line links them
	"github.com/calibra-bench/calibra/internal/results"
)

// The report gives each engine's waits, counters, log and cluster in that
// engine's words, and an engine that registered none (or that this calibra
// does not link) neutral ones, with only the counters measured: never
// another engine's.
func TestEachEngineInItsOwnWords(t *testing.T) {
	for _, c := range []struct {
		engine       string
		want, absent []string
	}{
		{"postgresql", []string{"pg_stat_activity", "(pg_stat_database)", "| blocks read | hit % |", "| WAL |", "| WAL MB/s |", "| WAL syncs/s | server WAL sync ms |", "lag: pg_stat_replication", "Checkpoints begun in the timed window: 3."},
			[]string{"InnoDB", "performance_schema", "redo", "Galera"}},
		{"mariadb", []string{"performance_schema.events_waits_current", "(performance_schema's transactions", "| pages read | buffer pool hit % |", "(calibra, InnoDB)", "| redo log |", "| redo log MB/s |", "| redo log syncs/s |",
			"InnoDB checkpoints in the timed window", "Nodes of the Galera cluster over the window", "Nodes of the Galera cluster, one database"},
			[]string{"pg_", "WAL", "blocks read"}},
		{"thirdengine", []string{"samples of the server's active sessions", "| active sessions | blocks read | cache hit % | log sync ms |\n| 1.50 | 7 | 1.50 | 1.50 |", "| log |", "lag: the primary's view",
			"Nodes of the cluster over the window"},
			[]string{"pg_", "InnoDB", "performance_schema", "WAL", "redo", "Galera"}},
	} {
		t.Run(c.engine, func(t *testing.T) {
			md := words(Build(wordsRun(c.engine), nil))
			for _, w := range c.want {
				if !strings.Contains(md, w) {
					t.Errorf("the report does not say %q", w)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(md, w) {
					t.Errorf("the report says %q, another engine's word", w)
				}
			}
			if t.Failed() {
				t.Log(md)
			}
		})
	}
}

// wordsRun is an oltp run on engine, with a cluster of two nodes, a
// standby, the log on its own device, and a few database counters.
func wordsRun(engine string) *results.Run {
	f, n := 1.5, int64(7)
	three := int64(3)
	disk := &results.ObserveDisk{RIOPS: &f, WIOPS: &f}
	o := &results.OLTP{NOPM: &f, CheckpointsInWindow: &three, Instances: []results.OLTPInstance{{Instance: 1, Users: 1}, {Instance: 2, Users: 1}}}
	return &results.Run{Status: results.StatusComplete,
		Meta: results.Meta{Command: "oltp run", Engine: &results.Engine{Name: engine, ClusterNodes: 2}},
		Steps: []results.Step{{StepHeader: results.StepHeader{Kind: results.KindOLTP, Name: "oltp", Status: results.StatusComplete,
			Observe: &results.Observe{Disk: disk, WALDisk: disk, WALDevices: []string{"sdb"},
				DB: &results.ObserveDB{Database: "calibra", ActiveSessionsAvg: &f, BlksRead: &n, HitPct: &f, WALSyncAvgMs: &f,
					Nodes: []results.ObserveNode{{Node: 1}, {Node: 2}}},
				Replicas: []results.ObserveReplica{{Name: "calibra_replica_1"}}}}, Body: o},
			iocalWords(&f)}}
}

// iocalWords is an iocal step with a write point and a commit point, whose
// tables name the engine's log.
func iocalWords(f *float64) results.Step {
	p := results.IOCalPoint{Jobs: 1, MBPS: *f, WALMBPS: f, WALSyncsPS: f, ServerSyncMs: f}
	return results.Step{StepHeader: results.StepHeader{Kind: results.KindIOCal, Name: "iocal", Status: results.StatusComplete},
		Body: &results.IOCal{SeqWrite: &results.IOCalSeq{Points: []results.IOCalPoint{p}}, Commit: &results.IOCalCommit{Points: []results.IOCalPoint{p}}}}
}

// words are r's definitions, notes, captions and tables, each line as
// markdown writes a table's.
func words(r *Report) string {
	var b strings.Builder
	for _, d := range r.Defs {
		b.WriteString(d.Term + ": " + d.Text + "\n")
	}
	for _, s := range r.Sections {
		for _, n := range s.Notes {
			b.WriteString(n + "\n")
		}
		for _, bl := range s.Blocks {
			if t := bl.Table; t != nil {
				b.WriteString(t.Caption + "\n| " + strings.Join(t.Head, " | ") + " |\n")
				for _, row := range t.Rows {
					for _, c := range row {
						b.WriteString("| " + c.Text + " ")
					}
					b.WriteString("|\n")
				}
			}
		}
	}
	return b.String()
}
