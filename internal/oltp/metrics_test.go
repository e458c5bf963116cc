package oltp

import (
	"math"
	"testing"
	"time"
)

func TestMetricFormulas(t *testing.T) {
	c0 := counters{sumNextOID: 60000, xacts: 1000}
	c1 := counters{sumNextOID: 60000 + 9000, xacts: 1000 + 20010}
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
