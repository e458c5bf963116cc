package device

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
)

// The fixtures are real fio 3.33 output captured by testdata/fio/capture.sh
// from the job files beside them; each golden file is the point calibra
// makes of one.
func TestParseGolden(t *testing.T) {
	fixtures, _ := filepath.Glob("testdata/fio/*.json")
	if len(fixtures) == 0 {
		t.Fatal("no fixtures under testdata/fio")
	}
	for _, path := range fixtures {
		if strings.HasSuffix(path, ".golden.json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(struct {
				Version string `json:"fio_version"`
				Point   any    `json:"point"`
			}{r.Version, point(Spec{Name: name}, 4, 2, []*Report{r})}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "fio", name+".golden.json"), append(got, '\n'))
		})
	}
}

// fio's own percentiles, to check calibra reads its histogram the same way.
type fioPercentiles struct {
	Jobs []struct {
		Read, Write struct {
			TotalIOs int64 `json:"total_ios"`
			Clat     struct {
				Percentile map[string]float64 `json:"percentile"`
			} `json:"clat_ns"`
		}
	} `json:"jobs"`
}

// For one direction, percentiles from the bins (or, in plain json, from the
// percentile list read as bins) must equal the ones fio printed.
func TestPercentilesMatchFio(t *testing.T) {
	fixtures, _ := filepath.Glob("testdata/fio/*.json")
	for _, path := range fixtures {
		if strings.HasSuffix(path, ".golden.json") {
			continue
		}
		data, _ := os.ReadFile(path)
		r, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var fp fioPercentiles
		if err := json.Unmarshal(data[jsonStart(data):], &fp); err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			name string
			got  Direction
			fio  map[string]float64
			ios  int64
		}{{"read", r.Read, fp.Jobs[0].Read.Clat.Percentile, fp.Jobs[0].Read.TotalIOs},
			{"write", r.Write, fp.Jobs[0].Write.Clat.Percentile, fp.Jobs[0].Write.TotalIOs}} {
			if d.ios == 0 {
				continue
			}
			for key, want := range d.fio {
				p, _ := strconv.ParseFloat(key, 64)
				if got := d.got.Clat.Percentiles(p)[0]; got != want {
					t.Errorf("%s %s p%s = %v, fio says %v", filepath.Base(path), d.name, key, got, want)
				}
			}
		}
	}
}

// The mixed fixture checked by hand against its JSON: IOPS and MB/s are the
// sums of the directions, the mean is weighted by I/Os, and the combined
// p99 lies between the directions' p99s.
func TestParseMixed(t *testing.T) {
	data, err := os.ReadFile("testdata/fio/randrw70-text-before.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "fio: ") {
		t.Fatal("the fixture should start with fio's warning text")
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p := point(Spec{Name: "mix"}, 4, 2, []*Report{r})
	if p.Read == nil || p.Write == nil {
		t.Fatal("a mixed point has no read/write split")
	}
	if sum := round(p.Read.IOPS+p.Write.IOPS, 2); sum != p.IOPS {
		t.Errorf("iops %v, read + write = %v", p.IOPS, sum)
	}
	if share := p.Read.IOPS / p.IOPS; share < 0.65 || share > 0.75 {
		t.Errorf("read share %.3f of a 70/30 mix", share)
	}
	wantMean := (r.Read.Clat.Sum + r.Write.Clat.Sum) / (r.Read.Clat.N + r.Write.Clat.N) / 1e3
	if got := p.LatUs.Mean; got != round(wantMean, 3) {
		t.Errorf("mean %v µs, want %v", got, wantMean)
	}
	lo, hi := min(p.Read.LatUs.P99, p.Write.LatUs.P99), max(p.Read.LatUs.P99, p.Write.LatUs.P99)
	if p.LatUs.P99 < lo || p.LatUs.P99 > hi {
		t.Errorf("combined p99 %v outside the directions' %v..%v", p.LatUs.P99, lo, hi)
	}
	if p.LatUs.Max != max(p.Read.LatUs.Max, p.Write.LatUs.Max) {
		t.Errorf("max %v is not the larger direction's", p.LatUs.Max)
	}
}

func TestParseErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/fio/randread-einval-error.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 1 || r.ErrNo != 22 {
		t.Errorf("errors %d errno %d, want 1 and 22 (EINVAL ended the job)", r.Errors, r.ErrNo)
	}
	if p := point(Spec{Name: "e"}, 1, 1, []*Report{r}); p.LatUs != nil {
		t.Errorf("no I/O completed, yet lat_us is %+v", p.LatUs)
	}
	// Counted errors (continue_on_error) add to a job-ending one; two
	// reports, as without group_reporting, are summed.
	counted := `{"fio version": "fio-3.33", "jobs": [
		{"error": 5, "total_err": 3, "read": {"total_ios": 0}},
		{"error": 0, "total_err": 2, "read": {"total_ios": 0}}]}`
	if r, err := Parse([]byte(counted)); err != nil || r.Errors != 6 || r.ErrNo != 5 {
		t.Errorf("Parse = %+v, %v; want 6 errors, errno 5", r, err)
	}
}

func TestParseBadOutput(t *testing.T) {
	for _, in := range []string{
		"",
		"fio: engine nonesuch not loadable\nfio: failed to load engine\n",
		"{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [",
		`{"fio version": "fio-3.33", "jobs": []}`,
		`{"fio version": "fio-2.2", "jobs": [{"read": {"total_ios": 5, "clat": {"mean": 1}}}]}`,
	} {
		if r, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, r)
		}
	}
}

// --status-interval writes several reports; the last is the final one, and
// text after it is ignored.
func TestParseLastReport(t *testing.T) {
	one := func(ios int) string {
		return `{"fio version": "fio-3.33", "jobs": [{"read": {"total_ios": ` + strconv.Itoa(ios) +
			`, "iops": 1, "clat_ns": {"N": ` + strconv.Itoa(ios) + `, "mean": 1000, "max": 1000, "bins": {"1000": ` + strconv.Itoa(ios) + `}}}}]}`
	}
	r, err := Parse([]byte("note: starting\n" + one(5) + "\n" + one(9) + "\nfio: trailing text\n"))
	if err != nil || r.Read.IOs != 9 {
		t.Fatalf("Parse = %+v, %v; want the second report (9 I/Os)", r, err)
	}
}

func TestHistPercentiles(t *testing.T) {
	h := Hist{Bins: map[float64]float64{100: 50, 200: 40, 300: 9, 1000: 1}, N: 100, Sum: 100 * 50, Max: 1000}
	got := h.Percentiles(1, 50, 51, 90, 99, 99.9, 100)
	want := []float64{100, 100, 200, 200, 300, 1000, 1000}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("percentiles %v, want %v", got, want)
			break
		}
	}
}
