package replay

import "testing"

// The payload converges on the profile's WAL a commit whether the engine
// logs a payload byte once (PostgreSQL's WAL message) or twice (MariaDB's
// updated blob: its new page and its undo).
func TestThePayloadConvergesOnTheProfilesWALPerCommit(t *testing.T) {
	const want = 6039
	for _, c := range []struct {
		name     string
		perByte  float64 // WAL bytes a payload byte
		overhead float64 // WAL bytes a commit besides the payload
	}{
		{"logged once", 1, 120},
		{"logged twice", 2.06, 80},
	} {
		t.Run(c.name, func(t *testing.T) {
			width := max(0, want-walOverhead)
			for range calibrations {
				width = nextWidth(width, c.overhead+c.perByte*float64(width), want)
			}
			if got := c.overhead + c.perByte*float64(width); got < 0.9*want || got > 1.1*want {
				t.Errorf("after %d rounds a payload of %d makes %.0f WAL bytes a commit, want %d ±10%%", calibrations, width, got, want)
			}
		})
	}
}
