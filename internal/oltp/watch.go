package oltp

import "time"

// Watcher follows a run while it runs (--metrics-listen): the collector
// hands it, once a second, what the users did since the last second, the
// same outcomes and latencies the timeline and the window record.
type Watcher interface {
	Second(s *Second)
}

// NumTxTypes is how many transaction types a run has (TxType).
const NumTxTypes = numTxTypes

// Second is one collector tick. Latencies and the Second itself are
// reused at the next tick: a Watcher keeps nothing of them.
type Second struct {
	Phase string // rampup or measure
	Users int
	Types [NumTxTypes]Outcomes
	// Latencies holds every completed transaction's latency (committed or
	// rolled back), the values its HdrHistograms record.
	Latencies []TxLatency
}

// Outcomes are one transaction type's outcomes: Count completed, of which
// Rollbacks rolled back (as the specification asks of 1% of New-Orders),
// Errors failed, and Sum the completed ones' total latency.
type Outcomes struct {
	Count, Rollbacks, Errors int64
	Sum                      time.Duration
}

// TxLatency is one completed transaction's latency.
type TxLatency struct {
	Type TxType
	Lat  time.Duration
}

// second fills s from the collector's tick.
func (t *tickStats) second(s *Second, phase string, users int) {
	s.Phase, s.Users, s.Latencies = phase, users, t.txs
	for i, o := range t.types {
		s.Types[i] = Outcomes{Count: o.count, Rollbacks: o.rollbacks, Errors: o.errors, Sum: time.Duration(o.sumNs)}
	}
}
