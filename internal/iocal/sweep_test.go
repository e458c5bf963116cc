package iocal

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

func pts(jobs []int, iops, lat []float64) []results.IOCalPoint {
	var out []results.IOCalPoint
	for i := range jobs {
		out = append(out, results.IOCalPoint{Jobs: jobs[i], IOPS: iops[i], LatMs: &results.IOCalLatency{Mean: lat[i]}})
	}
	return out
}

// CALIBRATE_IO's rule and the saturation rule of docs/design.md.
func TestSummarise(t *testing.T) {
	cases := []struct {
		name       string
		jobs       []int
		iops, lat  []float64
		bound      float64
		maxIOPS    float64 // 0: null
		latAtMax   float64
		saturation int // 0: null
	}{
		{"grows then flattens", []int{1, 2, 4, 8}, []float64{1000, 1900, 3000, 3100}, []float64{1, 1.05, 1.3, 2.5}, 10, 3100, 2.5, 4},
		{"bound cuts the top", []int{1, 2, 4, 8}, []float64{1000, 1900, 3000, 3100}, []float64{1, 1.05, 1.3, 12}, 10, 3000, 1.3, 4},
		{"bound at the edge is in", []int{1, 2}, []float64{100, 300}, []float64{10, 10}, 10, 300, 10, 0},
		{"nothing within the bound", []int{1, 2}, []float64{100, 101}, []float64{11, 20}, 10, 0, 0, 1},
		{"a drop is saturation", []int{1, 2, 4}, []float64{500, 450, 900}, []float64{1, 1, 1}, 10, 900, 1, 1},
		{"just under 5% is saturation", []int{1, 2}, []float64{1000, 1049}, []float64{1, 1}, 10, 1049, 1, 1},
		{"5% is growth", []int{1, 2}, []float64{1000, 1050}, []float64{1, 1}, 10, 1050, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &results.IOCalRandom{Points: pts(c.jobs, c.iops, c.lat), MaxLatencyMs: c.bound}
			missing := map[string]string{}
			summarise(r, "random_read", missing)
			if c.maxIOPS == 0 {
				if r.MaxIOPS != nil || missing["random_read.max_iops"] == "" {
					t.Errorf("max_iops = %v, missing %q; want null with a reason", r.MaxIOPS, missing["random_read.max_iops"])
				}
			} else if r.MaxIOPS == nil || *r.MaxIOPS != c.maxIOPS || *r.LatencyMsAtMax != c.latAtMax {
				t.Errorf("max_iops %v at %v ms, want %v at %v", r.MaxIOPS, r.LatencyMsAtMax, c.maxIOPS, c.latAtMax)
			}
			if c.saturation == 0 {
				if r.SaturationJobs != nil || missing["random_read.saturation_jobs"] == "" {
					t.Errorf("saturation_jobs = %v; want null with a reason", r.SaturationJobs)
				}
			} else if r.SaturationJobs == nil || *r.SaturationJobs != c.saturation {
				t.Errorf("saturation_jobs = %v, want %d", r.SaturationJobs, c.saturation)
			}
		})
	}
}

func TestParseJobs(t *testing.T) {
	got, err := ParseJobs("4, 1,2")
	if err != nil || len(got) != 3 || got[0] != 1 || got[2] != 4 {
		t.Fatalf("ParseJobs = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1,1", "1025", ""} {
		if _, err := ParseJobs(bad); err == nil {
			t.Errorf("ParseJobs(%q) accepted", bad)
		}
	}
}

func TestRowsFillOneBlockEach(t *testing.T) {
	r := newRows(10, 3, rowBytes(8192), 1)
	buf := make([]byte, 100000)
	n, _ := r.Read(buf)
	lines := 0
	for _, b := range buf[:n] {
		if b == '\n' {
			lines++
		}
	}
	if lines != 3 || n < 3*rowBytes(8192) || n > 3*(rowBytes(8192)+4) {
		t.Fatalf("%d lines, %d bytes", lines, n)
	}
	if string(buf[:3]) != "10\t" {
		t.Fatalf("the first row starts %q", buf[:3])
	}
}

// A sweep still growing at its last point asks for more jobs only when
// more jobs could load the storage harder: not when the CPU, calibra or
// another load already bound that point.
func TestMoreJobsAdviceOnlyWhenTheStorageCouldTakeThem(t *testing.T) {
	for _, c := range []struct {
		limitedBy string
		advises   bool
	}{{"storage", true}, {"unknown", true}, {"cache", true}, {"cpu", false}, {"driver", false}, {"host", false}} {
		r := &results.IOCalRandom{Points: pts([]int{1, 4}, []float64{1000, 3000}, []float64{1, 1}), MaxLatencyMs: 10}
		r.Points[1].LimitedBy = c.limitedBy
		r.Points[1].LimitedByEvidence = &results.Evidence{Rule: "the CPUs were busy 96%"}
		missing := map[string]string{}
		summarise(r, "random_read", missing)
		got := missing["random_read.saturation_jobs"]
		if strings.Contains(got, "add more jobs") != c.advises || !c.advises && !strings.Contains(got, "limited by "+c.limitedBy) {
			t.Errorf("last point limited by %s: %q", c.limitedBy, got)
		}
	}
}
