package oltp

import (
	"errors"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

type seconds []Second

func (s *seconds) Second(x *Second) {
	c := *x
	c.Latencies = append([]TxLatency(nil), x.Latencies...)
	*s = append(*s, c)
}

// A Watcher is handed each second exactly what the users recorded: every
// outcome by type and every completed transaction's latency, and the next
// second only what came after.
func TestWatcherSeesEachSecond(t *testing.T) {
	tests := []struct {
		name     string
		outcomes []outcome
		want     [numTxTypes]Outcomes
		lats     int
	}{
		{"none", nil, [numTxTypes]Outcomes{}, 0},
		{"commit, rollback and error", []outcome{
			{t: NewOrder, lat: 2 * time.Millisecond},
			{t: NewOrder, lat: 3 * time.Millisecond, err: ErrRolledBack},
			{t: Payment, lat: time.Millisecond, err: errors.New("deadlock")},
			{t: StockLevel, lat: 5 * time.Millisecond},
		}, [numTxTypes]Outcomes{
			NewOrder:   {Count: 2, Rollbacks: 1, Sum: 5 * time.Millisecond},
			Payment:    {Errors: 1},
			StockLevel: {Count: 1, Sum: 5 * time.Millisecond},
		}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got seconds
			recs := []*recorder{newRecorder(false, false, true), newRecorder(false, false, true)}
			c := &collector{recs: recs, users: 2, began: time.Now(), prog: progress.New(nil, progress.None, false),
				out: &results.OLTP{}, tick: tickStats{lat: hist.New()}, watch: &got,
				log: hist.NewLog(time.Now(), "test")}
			u := &user{}
			for i, o := range tc.outcomes {
				u.record(lease{rec: recs[i%2]}, &TxInputs{}, o)
			}
			c.collect(time.Now(), "measure")
			c.collect(time.Now(), "measure")
			if len(got) != 2 {
				t.Fatalf("the watcher saw %d seconds, want 2", len(got))
			}
			if got[0].Types != tc.want || len(got[0].Latencies) != tc.lats || got[0].Phase != "measure" || got[0].Users != 2 {
				t.Errorf("first second: %+v, want %+v with %d latencies", got[0], tc.want, tc.lats)
			}
			if got[1].Types != ([numTxTypes]Outcomes{}) || len(got[1].Latencies) != 0 {
				t.Errorf("second second holds the first's again: %+v", got[1])
			}
		})
	}
}
