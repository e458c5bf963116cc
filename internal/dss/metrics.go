package dss

import (
	"fmt"
	"math"
)

// Geomean is the geometric mean of positive values; 0 when there are none.
func Geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// PowerAtSize is TPC-H's Power@Size (clause 5.4.1): 3600 x SF over the
// geometric mean of the power test's 22 query and 2 refresh intervals, in
// seconds (already rounded by Round01). Query intervals shorter than the longest over 1000 count as the
// longest over 1000 (clause 5.4.1.4), so one instant query cannot dominate.
func PowerAtSize(sf float64, queries, refresh []float64) float64 {
	longest := 0.0
	for _, q := range queries {
		longest = max(longest, q)
	}
	all := make([]float64, 0, len(queries)+len(refresh))
	for _, q := range queries {
		all = append(all, max(q, longest/1000))
	}
	all = append(all, refresh...)
	return 3600 * sf / Geomean(all)
}

// ThroughputAtSize is TPC-H's Throughput@Size (clause 5.4.2): the queries of
// S streams per hour of the throughput test's elapsed time, times SF.
func ThroughputAtSize(sf float64, streams int, elapsedS float64) float64 {
	return float64(streams*Queries) * 3600 / elapsedS * sf
}

// QphH is TPC-H's composite query-per-hour figure (clause 5.4.3): the
// geometric mean of Power@Size and Throughput@Size.
func QphH(power, throughput float64) float64 {
	return math.Sqrt(power * throughput)
}

// Round01 is clause 5.3.7.5's reporting rule for a query or refresh
// interval: rounded to the nearest 0.1 s, anything under 0.05 s counted as
// 0.1 s, so that no interval is zero and a run at a tiny scale cannot claim
// a huge Power@Size from sub-second queries. The metrics use these times.
func Round01(s float64) float64 {
	return max(0.1, math.Round(s*10)/10)
}

// Round01All applies Round01 to each interval.
func Round01All(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = Round01(x)
	}
	return out
}

// permittedSF are the scale factors of clause 4.1.3: the only ones a
// TPC-H result may be reported at.
var permittedSF = []float64{1, 10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000}

// InvalidReasons says why the metrics of a run at scale factor sf with the
// given query streams (0 when no throughput test ran) are not a result the
// specification defines, and must be read as indicative: a scale factor
// below 1 or off the list of clause 4.1.3, fewer streams than clause 5.3.4's
// minimum for the scale factor.
func InvalidReasons(sf float64, streams int) []string {
	var why []string
	switch {
	case sf < 1:
		why = append(why, fmt.Sprintf("scale factor %g is below 1, the smallest the specification defines a result at (clause 4.1.3)", sf))
	default:
		ok := false
		for _, p := range permittedSF {
			ok = ok || sf == p
		}
		if !ok {
			why = append(why, fmt.Sprintf("scale factor %g is not one of the specification's (1, 10, 30, 100, 300, 1000, ...; clause 4.1.3)", sf))
		}
	}
	if min := MinStreams(sf); streams > 0 && streams < min {
		why = append(why, fmt.Sprintf("%d query streams are fewer than the %d clause 5.3.4 requires at scale factor %g", streams, min, sf))
	}
	return why
}
