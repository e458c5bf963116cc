package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// A steady-state sweep's summary: the method, each point's judgement and
// burst (with the host's part), and each spec's IOPS within each bound; a
// fresh one calls itself a first look.
func TestDeviceSummarySteadyState(t *testing.T) {
	rng, slope, p9999 := 6.3, 1.3, 4358.1
	d := &results.Device{FioVersion: "fio-3.33", IOEngine: "io_uring", Direct: true, Repeats: 1, SizeBytes: 64 << 20, MaxLatencyUs: 1000,
		SteadyState: &results.DeviceSteadyMethod{PreconditionBytes: 128 << 20, PreconditionPasses: 2, PreconditionBlock: 128 << 10,
			RoundS: 60, MaxRounds: 25, WindowRounds: 5, RangeLimitPct: 20, SlopeLimitPct: 10},
		Points: []results.DevicePoint{{Spec: "8k-randwrite", QD: 8, IOPS: 27979, LimitedBy: "host",
			LatUs:       &results.DeviceLatency{P99: 3391.5, P9999: &p9999},
			SteadyState: &results.DeviceSteady{Reached: true, Round: 7, RangePct: &rng, SlopePct: &slope, WindowMeanIOPS: 27979, RoundsIOPS: make([]float64, 7)},
			Burst:       &results.DeviceBurst{FellAtS: 6, PeakIOPS: 42668, SettledIOPS: 28337, DropPct: 33.6, WrittenBytesBeforeFall: 2 << 30, Raw: "002-8k-randwrite-qd8-round01"}}},
		Specs: []results.DeviceSpec{{Name: "8k-randwrite", JudgedOn: "p99_bound", AtMaxLatencyMissing: "none",
			IOPSAtP99: []results.DeviceAtBound{{BoundUs: 1000, Missing: "no point kept p99 at or under 1ms (the lowest was 3.39 ms)"},
				{BoundUs: 5000, Point: &results.DeviceBest{QD: 8, IOPS: 27979, P99Us: 3391.5}, OutstandingIOs: 8}}}}}
	var b strings.Builder
	writeDeviceSummary(&b, results.Step{StepHeader: results.StepHeader{Status: "complete"}}, d)
	for _, want := range []string{
		"method     steady state (SNIA PTS): 128 MiB per worker preconditioned in 128 KiB sequential writes, rounds of 60 s, window 5 rounds, range ≤ 20%, slope ≤ 10%, at most 25 rounds",
		"    3391.5       0.0    4358.1 ",
		"steady at round 7: window range 6.3%, slope 1.3% of its mean 27979 IOPS",
		"burst: the rate fell 6 s in (counted from the start of 002-8k-randwrite-qd8-round01), from 42668 to 28337 IOPS (-34%), after 2 GiB written; another load on the host limited this point and may be why",
		"IOPS at p99 ≤ 1.00 ms  8k-randwrite   n/a: no point kept p99 at or under 1ms",
		"IOPS at p99 ≤ 5.00 ms  8k-randwrite   27979 IOPS at qd 8, 8 outstanding (p99 3.39 ms)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, b.String())
		}
	}
	d.SteadyState, d.Points[0].SteadyState = nil, nil
	b.Reset()
	writeDeviceSummary(&b, results.Step{}, d)
	if !strings.Contains(b.String(), "fresh out of box: a first look, not steady state") {
		t.Errorf("a fresh sweep is not called a first look:\n%s", b.String())
	}
	// The same fall, judged the host's: said so, and not called a burst.
	p := &d.Points[0]
	p.HostLimitedFall, p.Burst = p.Burst, nil
	p.HostLimitedFall.Host = &results.DeviceFallHost{BusyPctBefore: 60, BusyPctAfter: 99, OutsidePctBefore: 4, OutsidePctAfter: 71}
	b.Reset()
	writeDeviceSummary(&b, results.Step{}, d)
	if want := "from 42668 to 28337 IOPS, as other loads' CPU rose from 4% to 71% of the machine and the device answered as fast as before: host-limited, not a burst"; !strings.Contains(b.String(), want) || strings.Contains(b.String(), "burst: ") {
		t.Errorf("the summary of a host's fall lacks %q or calls it a burst:\n%s", want, b.String())
	}
}
