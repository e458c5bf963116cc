package dss

import (
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
}
