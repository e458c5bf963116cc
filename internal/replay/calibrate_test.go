package replay

import (
	"io"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/profile"
	"github.com/calibra-bench/calibra/internal/progress"
)

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

// A commit gain corrects what the server counts of what the driver did:
// where the driver fell behind (the storage could not keep up), it stays.
func TestTheGainIsLeftAloneWhereTheDriverFellBehind(t *testing.T) {
	for _, c := range []struct {
		name            string
		done            int     // commits the driver did in the 1 s window, of 100 due
		serverCommitsPS float64 // what the server counted
		wantGain        float64
	}{
		{"kept up, the server counts half", 100, 50, 2},
		{"kept up, the server counts all", 100, 100, 1},
		{"fell behind on slow storage", 30, 30, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &profile.Profile{Rates: profile.Rates{CommitsPS: 100}, Shape: profile.Shape{Concurrency: 2}}
			r := &runner{cfg: Config{Profile: p}, env: Env{Prog: progress.New(io.Discard, progress.None, false)}, readGain: 1, commitGain: 1}
			m := measured{secs: 1, reads: hist.New(), commits: hist.New()}
			for range c.done {
				m.commits.Record(time.Millisecond)
			}
			m.w.Rates.CommitsPS = c.serverCommitsPS
			r.calibrate(m, r.loadAt(1))
			if r.commitGain != c.wantGain {
				t.Errorf("commit gain %.2f, want %.2f", r.commitGain, c.wantGain)
			}
		})
	}
}
