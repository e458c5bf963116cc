package iocalmy

import (
	"slices"
	"testing"
	"time"
)

// The loop's spans are each commit's microseconds; a call that timed every
// commit at zero (SYSDATE() frozen at the statement's start) is refused,
// not reported as infinitely fast commits.
func TestParseSpans(t *testing.T) {
	got, err := parseSpans("104 0 99 ")
	if want := []time.Duration{104 * time.Microsecond, 0, 99 * time.Microsecond}; err != nil || !slices.Equal(got, want) {
		t.Errorf("spans %v, %v; want %v", got, err, want)
	}
	if got, err := parseSpans(""); err != nil || len(got) != 0 {
		t.Errorf("a call that committed nothing: %v, %v", got, err)
	}
	for _, bad := range []string{"0 0 0 ", "12 x "} {
		if got, err := parseSpans(bad); err == nil {
			t.Errorf("spans %q read as %v", bad, got)
		}
	}
}
