package replay

import (
	"context"
	"io"
	"sync/atomic"
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
		done            int64   // commits the driver finished in the 1 s window, of 100 due
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
			m := measured{secs: 1, reads: hist.New(), commits: hist.New(), commitsDone: c.done}
			m.w.Rates.CommitsPS = c.serverCommitsPS
			r.calibrate(m, r.loadAt(1))
			if r.commitGain != c.wantGain {
				t.Errorf("commit gain %.2f, want %.2f", r.commitGain, c.wantGain)
			}
		})
	}
}

// lateConn makes its commits at once, reporting each finished late after
// its due time.
type lateConn struct {
	Conn
	late time.Duration
}

func (c lateConn) Commits(_ context.Context, _ int, _ int64, n int, _ time.Time, _ time.Duration, _ int) ([]time.Duration, error) {
	lats := make([]time.Duration, n)
	for i := range lats {
		lats[i] = c.late
	}
	return lats, nil
}

// A commit due in the window but finished past its edge is not in the
// server's count over it, so it is not one the driver kept up with.
func TestOnlyCommitsFinishedInTheWindowCount(t *testing.T) {
	for _, c := range []struct {
		name     string
		late     time.Duration
		wantDone int64
	}{
		{"on time", 0, 100},
		{"a window late", time.Second, 1}, // the one due at the window's start
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &runner{committers: []Conn{lateConn{late: c.late}}}
			t0 := time.Now().Add(time.Hour) // never reached: the fake does not wait
			s := schedule{t0: t0, from: t0, to: t0.Add(time.Second)}
			var done atomic.Int64
			if err := r.commit(t.Context(), 0, load{mult: 1, commitsPS: 100, committers: 1}, s, hist.New(), &done); err != nil {
				t.Fatal(err)
			}
			if done.Load() != c.wantDone {
				t.Errorf("%d commits finished in the window, want %d", done.Load(), c.wantDone)
			}
		})
	}
}
