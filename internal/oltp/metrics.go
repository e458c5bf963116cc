package oltp

import (
	"math"
	"time"
)

// The metric formulas of docs/design.md, in one place so that each is written and
// tested once.

// perMinute turns a count over a window into a rate per minute.
func perMinute(count float64, window time.Duration) float64 {
	if window <= 0 {
		return math.NaN()
	}
	return count / window.Minutes()
}

// nopm is committed New-Orders per minute: the growth of sum(d_next_o_id)
// over the window (a rolled-back New-Order does not advance it).
func nopm(c0, c1 Counters, window time.Duration) float64 {
	return perMinute(float64(c1.SumNextOID-c0.SumNextOID), window)
}

// tpmDB is the server's commits plus rollbacks per minute, less the
// transactions calibra itself ran inside the window to read and flush
// statistics (overhead).
func tpmDB(c0, c1 Counters, overhead int64, window time.Duration) float64 {
	return perMinute(float64(c1.Xacts-c0.Xacts-overhead), window)
}

// efficiencyPct is NOPM against the specification's maximum of 12.86
// New-Orders per minute per warehouse (spec timing only).
func efficiencyPct(nopm float64, warehouses int) float64 {
	return 100 * nopm / (12.86 * float64(warehouses))
}

// art is the mean latency in milliseconds of every completed transaction.
func art(types [numTxTypes]typeStats) float64 {
	var n, sum int64
	for _, s := range types {
		n += s.count
		sum += s.sumNs
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(sum) / float64(n) / 1e6
}

// mixPct is each type's share of completed transactions, in percent.
func mixPct(types [numTxTypes]typeStats) [numTxTypes]float64 {
	var out [numTxTypes]float64
	var n int64
	for _, s := range types {
		n += s.count
	}
	if n == 0 {
		return out
	}
	for i, s := range types {
		out[i] = 100 * float64(s.count) / float64(n)
	}
	return out
}
