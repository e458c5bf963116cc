package results

import (
	"math"
	"testing"
)

// One formatter for every figure people read: the summary, the report
// and compare agree on 5 and on a figure that is not a number.
func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {5, "5"}, {-3, "-3"}, {0.01234, "0.012"}, {1.5, "1.50"}, {12.34, "12.3"}, {999.6, "1,000"},
		{1234567.8, "1,234,568"}, {-4321, "-4,321"}, {math.NaN(), "n/a"}, {math.Inf(1), "n/a"}} {
		if got := Num(c.v); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	for us, want := range map[float64]string{2500: "2.5 ms", 1000: "1 ms", 500: "500 µs"} {
		if got := Micros(us); got != want {
			t.Errorf("Micros(%v) = %q, want %q", us, got, want)
		}
	}
}
