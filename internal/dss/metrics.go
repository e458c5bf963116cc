package dss

import "math"

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
// seconds. Query intervals shorter than the longest over 1000 count as the
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
