package oltp

import (
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

func TestMetricFormulas(t *testing.T) {
	c0 := Counters{SumNextOID: 60000, Xacts: 1000}
	c1 := Counters{SumNextOID: 60000 + 9000, Xacts: 1000 + 20010}
	win := 3 * time.Minute
	cases := []struct {
		name      string
		got, want float64
	}{
		{"NOPM is the growth of sum(d_next_o_id) per minute", nopm(c0, c1, win), 3000},
		{"tpm_db subtracts calibra's own commits", tpmDB(c0, c1, 10, win), 6666.666666666667},
		{"efficiency against 12.86 per warehouse", efficiencyPct(1286, 100), 100},
		{"per minute over 30 s doubles", perMinute(50, 30*time.Second), 100},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if math.Abs(c.got-c.want) > 1e-9 {
				t.Fatalf("got %v, want %v", c.got, c.want)
			}
		})
	}
	if !math.IsNaN(perMinute(1, 0)) {
		t.Fatal("a rate over an empty window must be NaN, never a number")
	}
}

func TestARTAndMixWeighEveryCompletedTransaction(t *testing.T) {
	var types [numTxTypes]typeStats
	types[NewOrder] = typeStats{count: 3, sumNs: int64(3 * 2 * time.Millisecond)}
	types[Payment] = typeStats{count: 1, sumNs: int64(6 * time.Millisecond), errors: 5}
	if got := art(types); math.Abs(got-3) > 1e-12 {
		t.Fatalf("ART = %v ms, want 3 (mean of 2,2,2,6; errors excluded)", got)
	}
	mix := mixPct(types)
	if mix[NewOrder] != 75 || mix[Payment] != 25 || mix[Delivery] != 0 {
		t.Fatalf("mix = %v, want 75/25/0/0/0", mix)
	}
	if !math.IsNaN(art([numTxTypes]typeStats{})) {
		t.Fatal("ART of no transaction must be NaN (reported as missing), never zero")
	}
}

func TestTickColumnsJoinTheNearestSecond(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tc := TickColumns{
		{At: base, Phase: "rampup", TPM: 60},
		{At: base.Add(time.Second), Phase: "measure", TPM: 120},
	}
	cases := []struct {
		name  string
		at    time.Time
		phase string
	}{
		{"exactly on a tick", base, "rampup"},
		{"nearer the second tick", base.Add(700 * time.Millisecond), "measure"},
		{"nearer the first tick", base.Add(300 * time.Millisecond), "rampup"},
		{"too far before any tick", base.Add(-800 * time.Millisecond), ""},
		{"too far after the last", base.Add(2 * time.Second), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := tc.Row(c.at)
			if len(row) != len(tc.Header()) || row[0] != c.phase {
				t.Fatalf("Row = %q, want phase %q in %d cells", row, c.phase, len(tc.Header()))
			}
		})
	}
}

// TestMemPerUserIsAbsentNotZero holds the heap a user to a positive figure
// or a reason: the samples are the whole process's heap, which other work
// can shrink between them.
func TestMemPerUserIsAbsentNotZero(t *testing.T) {
	cases := []struct {
		name         string
		heap0, heap1 uint64
		users        int
		want         float64 // 0: absent, with a reason
	}{
		{"the heap grew", 1 << 20, 1<<20 + 12*4096, 12, 4},
		{"the heap shrank (a GC freed another test's garbage)", 2 << 20, 1 << 20, 12, 0},
		{"the heap stood still", 1 << 20, 1 << 20, 12, 0},
		{"growth under 0.01 KB a user", 1 << 20, 1<<20 + 100, 1000, 0},
		{"no users", 1 << 20, 2 << 20, 0, 0},
	}
	for _, c := range cases {
		kb, why := memPerUserKB(c.heap0, c.heap1, c.users)
		if kb != c.want || (kb == 0) != (why != "") {
			t.Errorf("%s: %v KB, reason %q; want %v and a reason only when absent", c.name, kb, why, c.want)
		}
	}
}

// TestAutovacuumXacts holds tpm_db's share for autovacuum to what
// PostgreSQL 15 and 18 were seen to count: 2 a visit, 1 a table, 1 a
// vacuum or analysis, all published at the worker's exit.
func TestAutovacuumXacts(t *testing.T) {
	before := map[int64]TableAutovacuum{1: {3, 4}, 2: {5, 5}, 3: {0, 1}}
	pg := func(busy int64, tables map[int64]TableAutovacuum) Counters {
		return Counters{CountsAutovacuum: true, AutovacuumBusy: busy, AutovacuumTables: tables}
	}
	cases := []struct {
		name   string
		c0, c1 Counters
		want   int64
		ok     bool
	}{
		{"a server that does not count autovacuum's", Counters{}, Counters{Autovacuum: 9}, 0, true},
		{"no autovacuum in the window", pg(0, before), pg(0, before), 0, true},
		{"one table vacuumed", pg(0, before), pg(0, map[int64]TableAutovacuum{1: {4, 4}, 2: {5, 5}, 3: {0, 1}}), 4, true},
		{"three tables analysed", pg(0, before), pg(0, map[int64]TableAutovacuum{1: {3, 5}, 2: {5, 6}, 3: {0, 2}}), 8, true},
		{"three tables vacuumed and analysed", pg(0, before), pg(0, map[int64]TableAutovacuum{1: {4, 5}, 2: {6, 6}, 3: {1, 2}}), 11, true},
		{"one vacuumed, one analysed, one both", pg(0, before), pg(0, map[int64]TableAutovacuum{1: {4, 4}, 2: {5, 6}, 3: {1, 2}}), 2 + 3 + 4, true},
		{"a table new to the counts", pg(0, before), pg(0, map[int64]TableAutovacuum{1: {3, 4}, 2: {5, 5}, 3: {0, 1}, 9: {1, 1}}), 5, true},
		{"a worker at work at the start", pg(1, before), pg(0, map[int64]TableAutovacuum{1: {4, 5}}), 0, false},
		{"a worker at work at the end", pg(0, before), pg(1, before), 0, false},
	}
	for _, c := range cases {
		n, ok := AutovacuumXacts(c.c0, c.c1)
		if n != c.want || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, n, ok, c.want, c.ok)
		}
	}
}

// The window's checkpoints are the count's rise; a count that went back
// (InnoDB's log_checkpoints is a value) is missing, never negative.
func TestCheckpointsInTheWindow(t *testing.T) {
	for _, c := range []struct {
		at0, at1 int64
		want     *int64
		warned   bool
	}{
		{40, 43, new(int64(3)), false},
		{40, 40, new(int64(0)), true},
		{45, 23, nil, false},
	} {
		out := &results.OLTP{Missing: map[string]string{}}
		noteCheckpoints(out, c.at0, c.at1)
		got := out.CheckpointsInWindow
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want || (len(out.Warnings) > 0) != c.warned ||
			(got == nil) != (out.Missing["checkpoints_in_window"] != "") {
			t.Errorf("from %d to %d: %v, warnings %q, missing %q", c.at0, c.at1, got, out.Warnings, out.Missing)
		}
	}
}
