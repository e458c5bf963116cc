//go:build integration

package replay

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/profile"
	"github.com/calibra-bench/calibra/internal/results"
)

// commitFidelity bounds the commits/s the replay counted at 1x against the
// profile's. The commits are paced (by the server on PostgreSQL, by
// calibra on MariaDB) and calibrated
// against its own counter, at a rate (a paced oltp run's) a busy 2-core
// machine still keeps. Page reads are not bounded: their calibration has
// a second a round here (the test's budget), their rate depends on how
// much of the replay's data the OS cache holds, and beside other tests a
// 1x fell short of them (0.69 of the profile's, measured); the test holds
// that the replay reports them beside the profile's, and that a 1x short
// of them says "not even 1x". docs/profile.md has the fidelity measured
// with the default warmup and window. The commits' bounds are wide: beside
// the whole suite and a busy loop a 1x carried 1.47 of them (its two
// calibration rounds of a second each); what the test holds is that the
// replay drives commits at the profile's order, not its fidelity.
const commitFidelityLow, commitFidelityHigh = 0.5, 2.0

// profiledRate paces the profiled run's users, in transactions a second
// each: the bounds above were measured at it. At oltptest.PacedRate (25)
// the profile held some 110 commits a second, and a 1x beside the suite
// and a busy loop carried 2.2 of them (its WAL 4.3 times the profile's):
// the replay's own commits weigh more against a slower profile.
const profiledRate = 40

func TestProfileThenReplayPostgreSQL(t *testing.T) { profileThenReplay(t, "postgresql") }

// TestProfileThenReplayMariaDB holds MariaDB's commits to the same bounds.
// (Paced in a stored procedure that cut each payload from a local 1 MiB
// variable, which the server escaped into every logged statement, they
// carried 0.29 to 0.31 of the profile's.)
func TestProfileThenReplayMariaDB(t *testing.T) { profileThenReplay(t, "mariadb") }

// profileThenReplay profiles a paced oltp run on a managed instance while
// it runs, replays the profile on another path, and checks what the user
// reads: each rate's profile value, its value at 1x and a headroom (or
// the verdict's "not even 1x"), and the commits at
// 1x near the profile's.
func profileThenReplay(t *testing.T, engine string) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real database work; run without -short")
	}
	clitest.RequireEngine(t, engine)
	tmp := t.TempDir()
	path := clitest.StorageDir(t)
	// 128 MB of cache, which a warehouse fits: MariaDB's default 1 GB
	// would first write a 1 GiB redo log.
	cmd, lines, seen := clitest.StartUntil(t, "oltp run: 4 users", "oltp", "run", "--engine", engine, "--path", path, "--warehouses", "1", "--users", "4", "--db-cache", "128MB",
		"--rampup", "0s", "--duration", "12s", "--rate-per-user", fmt.Sprint(profiledRate), "--progress", "plain", "--store", "none",
		"--out", filepath.Join(tmp, "oltp"))
	drained := make(chan struct{})
	go func() {
		for lines.Scan() {
		}
		close(drained)
	}()
	prof := filepath.Join(tmp, "prof.yaml")
	// No --engine: profile reaches whichever engine's instance runs under --path.
	clitest.MustRun(t, 0, "profile", "--path", path, "--duration", "6s", "--out", prof, "--progress", "none")
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the profiled oltp run: %v; %q", err, seen)
	}
	clitest.NoServerLeft(t, path)
	p, err := profile.Read(t.Context(), prof)
	if err != nil {
		t.Fatal(err)
	}
	if p.Captured.Engine != engine || p.Rates.CommitsPS <= 0 || p.Shape.WALBytesPerCommit <= 0 || p.Shape.Concurrency <= 0 {
		t.Fatalf("the profile of a running oltp load: %+v", p)
	}
	t.Logf("profile: %+v, %+v", p.Rates, p.Shape)

	// A loose SLA, so the step count is 1x and 2x whenever 1x keeps up;
	// a 1x that does not still gives a verdict, checked below.
	out := filepath.Join(tmp, "replay")
	replayPath := clitest.StorageDir(t)
	clitest.MustRun(t, 0, "run", "--engine", engine, "--profile", prof, "--scale", "0.5", "--sla", "read_p99<=500ms,commit_p99<=500ms",
		"--set", "replay.window=4s", "--set", "replay.warmup=2s", "--set", "replay.max-multiple=2",
		"--path", replayPath, "--out", out, "--progress", "none", "--store", "none")
	clitest.NoServerLeft(t, replayPath)
	_, r := clitest.LastStep[*results.Replay](t, out)
	if len(r.Steps) == 0 || r.Steps[0].Multiple != 1 || r.HeadroomX == nil || r.Verdict == "" {
		t.Fatalf("replay steps %+v, headroom %v, verdict %q", r.Steps, r.HeadroomX, r.Verdict)
	}
	want := map[string]float64{"page_reads_ps": p.Rates.PageReadsPS, "commits_ps": p.Rates.CommitsPS, "wal_bytes_ps": float64(p.Rates.WALBytesPS)}
	for _, rate := range r.Rates {
		w, ok := want[rate.Name]
		if !ok {
			continue
		}
		delete(want, rate.Name)
		if rate.Profile != w || rate.At1x == nil {
			t.Errorf("%s: profile %g (the file says %g), at 1x %v", rate.Name, rate.Profile, w, rate.At1x)
		}
		if *r.HeadroomX >= 1 && (rate.AtHeadroom == nil || (w > 0 && rate.HeadroomX == nil)) {
			t.Errorf("%s: headroom %gx but no value at it: %+v", rate.Name, *r.HeadroomX, rate)
		}
		if rate.Name == "commits_ps" && (rate.Ratio1x == nil || *rate.Ratio1x < commitFidelityLow || *rate.Ratio1x > commitFidelityHigh) {
			t.Errorf("commits at 1x %v of the profile's %g: ratio %v, want %g to %g", deref(rate.At1x), w, deref(rate.Ratio1x), commitFidelityLow, commitFidelityHigh)
		}
		t.Logf("%s: profile %g, at 1x %v, ratio %v", rate.Name, w, deref(rate.At1x), deref(rate.Ratio1x))
	}
	if len(want) > 0 {
		t.Errorf("the replay step has no %v", want)
	}
	if *r.HeadroomX < 1 && !strings.HasPrefix(r.Verdict, "not even 1x") {
		t.Errorf("headroom %gx, verdict %q: want it to say not even 1x", *r.HeadroomX, r.Verdict)
	}
	t.Logf("headroom %gx: %s", *r.HeadroomX, r.Verdict)
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
