package replay

import (
	"testing"
	"time"
)

func TestParseSLA(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   SLA
		errors bool
	}{
		{DefaultSLA, SLA{5 * time.Millisecond, 2 * time.Millisecond}, false},
		{"read_p99<=20ms", SLA{20 * time.Millisecond, 2 * time.Millisecond}, false},
		{" commit_p99 <= 500us ", SLA{5 * time.Millisecond, 500 * time.Microsecond}, false},
		{"read_p99<5ms", SLA{}, true},
		{"read_p99<=fast", SLA{}, true},
		{"write_p99<=5ms", SLA{}, true},
		{"read_p99<=0s", SLA{}, true},
	} {
		got, err := ParseSLA(tc.in)
		if (err != nil) != tc.errors || (!tc.errors && got != tc.want) {
			t.Errorf("ParseSLA(%q) = %v, %v", tc.in, got, err)
		}
	}
}
