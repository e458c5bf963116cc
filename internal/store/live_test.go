package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// startRun makes a run directory as a command does when it starts: its
// results.json says running.
func startRun(t *testing.T, label string) *results.Dir {
	t.Helper()
	run := &results.Run{StartedAt: time.Now().UTC(), Meta: results.Meta{Command: "oltp run", Label: label,
		Host: results.Host{Hostname: "bench-1"}, Storage: results.Storage{Path: "/mnt/array"}, Engine: &results.Engine{Name: "postgresql"}}}
	dir, err := results.Create(filepath.Join(t.TempDir(), label), run)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A run followed from its start: listed as running with its target at
// once, its phase and seconds readable within a heartbeat or two, and
// once recorded as it ended, the complete run with no live rows left.
func TestFollowARun(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	dir := startRun(t, "live-a")
	l, err := s.Follow(ctx, dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.History(ctx, Query{Status: results.StatusRunning})
	if err != nil || len(rows) != 1 || rows[0].ID != l.ID || rows[0].Host != "bench-1" || rows[0].Storage != "/mnt/array" || rows[0].Engine != "postgresql" {
		t.Fatalf("running runs: %+v (%v), want live-a with its target", rows, err)
	}
	l.Phase("oltp run: measuring")
	cols := []string{"oltp_phase", "oltp_tpm_client", "oltp_art_ms"}
	l.Second(time.Now(), cols, []string{"measure", "1200.5", "3.250"})
	l.Second(time.Now(), cols, []string{"measure", "1300.0", "3.100"})
	var secs []LiveSecond
	for deadline := time.Now().Add(10 * time.Second); len(secs) < 2 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if secs, err = s.LiveSeconds(ctx, l.ID, 0, 100); err != nil {
			t.Fatal(err)
		}
	}
	if len(secs) != 2 || secs[1].Seq != 2 || secs[1].Figures["oltp_tpm_client"] != 1300.0 || secs[0].Figures["oltp_phase"] != "measure" {
		t.Fatalf("seconds: %+v, want the two seconds with their figures as numbers", secs)
	}
	if after, err := s.LiveSeconds(ctx, l.ID, 1, 100); err != nil || len(after) != 1 || after[0].Seq != 2 {
		t.Errorf("seconds after the first: %+v (%v)", after, err)
	}
	states, err := s.LiveStates(ctx)
	st := states[l.ID]
	if err != nil || st.Phase != "oltp run: measuring" || st.Stopped(time.Now()) {
		t.Errorf("live state %+v (%v): want its phase and a fresh heartbeat", st, err)
	}
	if !st.Stopped(st.Heartbeat.Add(StaleAfter + time.Second)) {
		t.Errorf("a heartbeat %s old does not say the run stopped", StaleAfter+time.Second)
	}

	if err := dir.Finish(results.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, dir.Path); err != nil {
		t.Fatal(err)
	}
	if err := l.End(ctx, false); err != nil {
		t.Fatal(err)
	}
	rows, _ = s.History(ctx, Query{})
	if len(rows) != 1 || rows[0].Status != results.StatusComplete {
		t.Errorf("after its end the store lists %+v, want the one run, complete", rows)
	}
	if n := count(t, s, `SELECT (SELECT count(*) FROM live) + (SELECT count(*) FROM live_seconds)`); n != 0 {
		t.Errorf("%d live rows left after the run was recorded", n)
	}
}

// A run that leaves no directory (bad input the server revealed) leaves
// no record either; a killed run's imported directory, still "running",
// has no heartbeat and shows as stopped.
func TestLiveEnds(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	l, err := s.Follow(ctx, startRun(t, "dropped").Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.End(ctx, true); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM runs`); n != 0 {
		t.Errorf("%d runs recorded after a dropped run, want none", n)
	}
	killed := startRun(t, "killed")
	if _, err := s.Record(ctx, killed.Path); err != nil {
		t.Fatal(err)
	}
	states, err := s.LiveStates(ctx)
	if err != nil || !states["anything"].Stopped(time.Now()) || len(states) != 0 {
		t.Errorf("a run without a heartbeat: states %+v (%v), want none and stopped", states, err)
	}
}
