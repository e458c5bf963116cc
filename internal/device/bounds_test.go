package device

import (
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// Over a sweep of outstanding I/O, each bound picks the error-free point
// of the highest IOPS whose p99 is within it.
func TestAtBounds(t *testing.T) {
	pt := func(spec string, qd int, iops, p99 float64, errs int64) results.DevicePoint {
		return results.DevicePoint{Spec: spec, QD: qd, Workers: 2, OutstandingIOs: 2 * qd, IOPS: iops, Errors: errs,
			LatUs: &results.DeviceLatency{P99: p99}}
	}
	points := []results.DevicePoint{
		pt("r", 1, 10000, 300, 0),
		pt("r", 4, 30000, 900, 0),
		pt("r", 16, 60000, 1000, 1), // within 1 ms but with an error
		pt("r", 32, 80000, 4800, 0),
		pt("r", 64, 82000, 9000, 0),
		pt("other", 64, 99000, 100, 0),
	}
	got := atBounds("r", points, []time.Duration{100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond})
	want := []struct {
		qd, outstanding int
		iops            float64
		missing         string
	}{
		{0, 0, 0, "no point kept p99 at or under 100µs (the lowest was 300 µs)"},
		{4, 8, 30000, ""},
		{32, 64, 80000, ""},
		{64, 128, 82000, ""},
	}
	for i, w := range want {
		g := got[i]
		if w.missing != "" {
			if g.Point != nil || g.Missing != w.missing {
				t.Errorf("bound %d: %+v, want missing %q", i, g, w.missing)
			}
			continue
		}
		if g.Point == nil || g.Point.QD != w.qd || g.Point.IOPS != w.iops || g.OutstandingIOs != w.outstanding {
			t.Errorf("bound %v µs: %+v %+v, want qd %d (%d outstanding) at %.0f IOPS", g.BoundUs, g, g.Point, w.qd, w.outstanding, w.iops)
		}
	}
	if none := atBounds("missing", points, []time.Duration{time.Millisecond}); none[0].Missing != "no error-free point of this spec was measured" {
		t.Errorf("a spec with no points: %+v", none[0])
	}
}

func TestParseBounds(t *testing.T) {
	got, err := ParseBounds("--p99-bounds", " 5ms, 1ms,500us", time.Hour)
	if err != nil || len(got) != 3 || got[0] != 500*time.Microsecond || got[2] != 5*time.Millisecond {
		t.Fatalf("%v %v", got, err)
	}
	for list, want := range map[string]string{"": "not a duration", "1ms,-1ms": "not positive", "2h": "too long a bound", "1ms,1ms": "twice"} {
		if _, err := ParseBounds("--p99-bounds", list, time.Hour); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", list, err, want)
		}
	}
}
