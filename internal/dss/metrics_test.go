package dss

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func repeat(x float64, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = x
	}
	return xs
}

func TestMetricFormulas(t *testing.T) {
	// 24 intervals of 2 s at SF 1: 3600 / 2.
	if got := PowerAtSize(1, repeat(2, 22), []float64{2, 2}); !near(got, 1800) {
		t.Errorf("Power@Size = %v, want 1800", got)
	}
	// Queries shorter than the longest / 1000 count as that (clause 5.4.1.4):
	// 21 queries of 1 µs beside one of 10 s count as 10 ms.
	qs := append(repeat(1e-6, 21), 10)
	want := 3600 * 10 / Geomean(append(append(repeat(0.01, 21), 10), 1, 1))
	if got := PowerAtSize(10, qs, []float64{1, 1}); !near(got, want) {
		t.Errorf("Power@Size with instant queries = %v, want %v", got, want)
	}
	// 2 streams x 22 queries in 88 s at SF 0.1 = 3600 x 0.1 / 2 s.
	if got := ThroughputAtSize(0.1, 2, 88); !near(got, 180) {
		t.Errorf("Throughput@Size = %v, want 180", got)
	}
	if got := QphH(400, 100); !near(got, 200) {
		t.Errorf("QphH = %v, want 200", got)
	}
	if got := Geomean([]float64{1, 4, 16}); !near(got, 4) {
		t.Errorf("Geomean = %v, want 4", got)
	}
}

func done(q string, s float64) results.DSSQuery { return results.DSSQuery{Q: q, Seconds: &s} }

func powerOf(qs ...results.DSSQuery) *results.DSSPower {
	p := &results.DSSPower{Refresh: []results.DSSQuery{done("RF1", 1), done("RF2", 1)}}
	for q := 1; q <= Queries; q++ {
		p.Queries = append(p.Queries, done("x", 1))
	}
	copy(p.Queries, qs)
	return p
}

// finish computes every metric it can and says why for the others.
func TestFinishSaysWhyAMetricIsMissing(t *testing.T) {
	both := RunConfig{Power: true, Throughput: true}
	cases := []struct {
		name    string
		cfg     RunConfig
		out     results.DSS
		missing []string // keys that must be missing, with a reason
	}{
		{"complete", both, results.DSS{Power: powerOf(), Throughput: &results.DSSThroughput{Streams: 1, ElapsedS: 22,
			StreamRuns: []results.DSSStream{{Stream: 1, Queries: powerOf().Queries}}, Refresh: powerOf().Refresh}}, nil},
		{"power only", RunConfig{Power: true}, results.DSS{Power: powerOf()}, []string{"qphh"}},
		{"a query timed out", both, results.DSS{Power: powerOf(results.DSSQuery{Q: "14", TimedOut: true})},
			[]string{"power_at_size", "geomean_s", "throughput_at_size", "qphh"}},
		{"interrupted", both, results.DSS{Power: powerOf(results.DSSQuery{Q: "13", Error: interrupted})},
			[]string{"power_at_size", "geomean_s", "throughput_at_size", "qphh"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.out.ScaleFactor, c.out.Missing = 1, map[string]string{}
			out := finish(&c.out, c.cfg)
			for _, k := range c.missing {
				if out.Missing[k] == "" {
					t.Errorf("%s is not missing: %v", k, out.Missing)
				}
			}
			if len(out.Missing) != len(c.missing) {
				t.Errorf("missing %v, want only %v", out.Missing, c.missing)
			}
			if len(c.missing) == 0 && (out.QphH == nil || !near(*out.QphH, math.Sqrt(3600*3600))) {
				t.Errorf("qphh %v, want 3600 (every interval 1 s, SF 1)", out.QphH)
			}
			if why := out.Missing["power_at_size"]; c.name == "a query timed out" && !strings.Contains(why, "Q14 timed out") ||
				c.name == "interrupted" && !strings.Contains(why, "interrupted during Q13") {
				t.Errorf("the reason does not say what happened to which query: %q", why)
			}
		})
	}
}

func TestRowCheckAgainstTheSpecification(t *testing.T) {
	sf01 := map[string]int64{"region": 5, "nation": 25, "supplier": 1_000, "customer": 15_000, "part": 20_000,
		"partsupp": 80_000, "orders": 150_000, "lineitem": 600_572}
	if c := CheckRows(0.1, sf01); !c.OK || len(c.Unchecked) != 0 {
		t.Errorf("SF 0.1's counts fail: %+v", c)
	}
	sf01["lineitem"]--
	if c := CheckRows(0.1, sf01); c.OK || !strings.Contains(c.Detail, "lineitem has 600571 rows") {
		t.Errorf("a missing lineitem row passes: %+v", c)
	}
	if c := CheckRows(0.5, map[string]int64{"region": 5, "nation": 25, "supplier": 5_000, "customer": 75_000,
		"part": 100_000, "partsupp": 400_000, "orders": 750_000}); !c.OK || c.Unchecked[0] != "lineitem" {
		t.Errorf("SF 0.5 has no published lineitem count and must say so: %+v", c)
	}
}

// Every table is cut into parts that cover it once, biggest first.
func TestLoadJobs(t *testing.T) {
	jobs := loadJobs(1, 2)
	parts := map[string]int{}
	for i, j := range jobs {
		parts[j.table.name]++
		if j.parts < j.part || (i > 0 && j.bytes > jobs[i-1].bytes) {
			t.Fatalf("job %d %+v is out of order or range", i, j)
		}
	}
	if len(parts) != len(tables) || parts["lineitem"] < 2 || parts["region"] != 1 {
		t.Errorf("parts per table at SF 1: %v", parts)
	}
	// One generator makes the small tables: at SF 1 those under 32 MB, at
	// SF 0.01 all eight; at SF 10 only region, nation and supplier.
	for _, c := range []struct {
		sf   float64
		want string
	}{{1, "customer part supplier region nation"}, {0.01, "lineitem orders partsupp customer part supplier region nation"}, {10, "supplier region nation"}} {
		var together []string
		for _, j := range loadJobs(c.sf, 2) {
			if j.together {
				together = append(together, j.table.name)
			}
		}
		if got := strings.Join(together, " "); got != c.want {
			t.Errorf("SF %g: generated together %q, want %q", c.sf, got, c.want)
		}
	}
}

// Clause 5.3.7.5 on single intervals, then on the times a real power and
// throughput test recorded at SF 0.01 (calibra dss run --sf 0.01): with raw
// seconds Power@Size reads 5,840, where the rule gives 360 (the issue saw
// 6,867 against 360 on another run).
func TestTimingRuleOnRecordedTimes(t *testing.T) {
	for _, c := range []struct{ raw, want float64 }{
		{23.74, 23.7}, {23.75, 23.8}, {0.16, 0.2}, {0.05, 0.1}, {0.049, 0.1}, {0.0012, 0.1}, {0, 0.1}, {125.04, 125},
	} {
		if got := Round01(c.raw); !near(got, c.want) {
			t.Errorf("Round01(%v) = %v, want %v", c.raw, got, c.want)
		}
	}
	recorded := []float64{0.0098, 0.0044, 0.0165, 0.0023, 0.0079, 0.0076, 0.0368, 0.0039, 0.0129, 0.0073, 0.0065,
		0.0017, 0.0032, 0.0126, 0.002, 0.0079, 0.054, 0.0122, 0.0016, 0.0046, 0.0052, 0.0128}
	refresh := []float64{0.0025, 0.0012}
	streamQueries := func(s float64) []results.DSSQuery {
		var qs []results.DSSQuery
		for i := range Queries {
			qs = append(qs, done(fmt.Sprint(i+1), s))
		}
		return qs
	}
	var pq, pr []results.DSSQuery
	for i, s := range recorded {
		pq = append(pq, done(fmt.Sprint(i+1), s))
	}
	pr = []results.DSSQuery{done("RF1", refresh[0]), done("RF2", refresh[1])}
	out := finish(&results.DSS{ScaleFactor: 0.01, Missing: map[string]string{},
		Power: &results.DSSPower{Queries: pq, Refresh: pr},
		Throughput: &results.DSSThroughput{Streams: 2, ElapsedS: 0.281864241,
			StreamRuns: []results.DSSStream{{Stream: 1, Queries: streamQueries(0.006)}, {Stream: 2, Queries: streamQueries(0.007)}},
			Refresh:    []results.DSSQuery{done("RF1", 0.003), done("RF2", 0.001), done("RF1", 0.002), done("RF2", 0.001)}},
	}, RunConfig{Power: true, Throughput: true})
	if got := *out.Power.PowerAtSize; !near(got, 360) {
		t.Errorf("Power@Size = %.1f, want 360 (every interval counts as 0.1 s)", got)
	}
	if raw := PowerAtSize(0.01, recorded, refresh); !near(math.Round(raw), 5840) {
		t.Errorf("the raw times give Power@Size %.0f, want 5840: the recorded times changed", raw)
	}
	if got := *out.Throughput.ThroughputAtSize; !near(got, 2*22*3600/0.3*0.01) {
		t.Errorf("Throughput@Size = %.1f, want 5280 (elapsed 0.28 s counts as 0.3 s)", got)
	}
	if got := *out.QphH; !near(got, math.Sqrt(360*5280)) {
		t.Errorf("QphH = %.1f, want %.1f", got, math.Sqrt(360*5280))
	}
	q := out.Power.Queries[0]
	if *q.Seconds != 0.0098 || q.SecondsRounded == nil || *q.SecondsRounded != 0.1 {
		t.Errorf("Q1 keeps seconds %v and seconds_rounded %v, want 0.0098 and 0.1", *q.Seconds, q.SecondsRounded)
	}
	if out.Throughput.StreamRuns[1].Queries[0].SecondsRounded == nil || out.Throughput.Refresh[0].SecondsRounded == nil {
		t.Error("the throughput test's times are not rounded beside the raw ones")
	}
	if out.Valid == nil || *out.Valid || len(out.InvalidReasons) != 1 || !strings.Contains(out.InvalidReasons[0], "scale factor 0.01 is below 1") {
		t.Errorf("SF 0.01: valid %v, reasons %q; want invalid for the scale factor", out.Valid, out.InvalidReasons)
	}
}

func TestInvalidReasons(t *testing.T) {
	for _, c := range []struct {
		sf      float64
		streams int
		want    []string
	}{
		{1, 2, nil},
		{1, 0, nil}, // a power test alone
		{100, 5, nil},
		{0.1, 2, []string{"scale factor 0.1 is below 1"}},
		{10, 2, []string{"2 query streams are fewer than the 3 clause 5.3.4 requires at scale factor 10"}},
		{3, 3, []string{"scale factor 3 is not one of the specification's"}},
		{0.5, 1, []string{"below 1", "1 query streams are fewer than the 2"}},
	} {
		got := InvalidReasons(c.sf, c.streams)
		if len(got) != len(c.want) {
			t.Errorf("SF %g, %d streams: %q, want %d reasons", c.sf, c.streams, got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("SF %g, %d streams: %q, want it to say %q", c.sf, c.streams, got[i], c.want[i])
			}
		}
	}
}
