package iocal

import "fmt"

// A point's figures are rough when its latency comes from fewer than
// fewSamples operations, or when its operations ran past the window by
// more than outlastShare of it (the point then lasts as long as its
// slowest operation, not --point).
const (
	fewSamples   = 30
	outlastShare = 0.5
)

// pointWarnings says when a point's figures are rough: samples is the
// latencies it recorded, elapsed its seconds from start to the last
// operation's end, and meanOp the mean seconds of one operation.
func pointWarnings(test string, jobs int, samples int64, elapsed, window, meanOp float64) []string {
	var out []string
	at := fmt.Sprintf("%s at %d jobs", test, jobs)
	if samples < fewSamples {
		out = append(out, fmt.Sprintf("%s was measured from %d operations (fewer than %d): its latency mean and p99 are rough; a longer --point would give more",
			at, samples, fewSamples))
	}
	if elapsed > window*(1+outlastShare) {
		out = append(out, fmt.Sprintf("%s outlasted its %.0f s window: its operations (%.1f s each on average) took %.1f s to finish, so its rate is that of whole operations",
			at, window, meanOp, elapsed))
	}
	return out
}

// samples is the latencies the jobs recorded over a point.
func samples(jobs []*job) int64 {
	var n int64
	for _, j := range jobs {
		n += j.lat.Count()
	}
	return n
}

// meanOp is the jobs' mean seconds of one operation (a call, a chunk).
func meanOp(jobs []*job) float64 {
	var ops int64
	var sum float64
	for _, j := range jobs {
		ops += j.ops
		sum += j.sum.Seconds()
	}
	if ops == 0 {
		return 0
	}
	return sum / float64(ops)
}
