//go:build integration

package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestDeviceCliffOnTheLab: on the cliff lab (a 64 MiB write-back flash
// cache in front of an 8 ms platter), 4 KiB random writes over 256 MiB fall
// off the cache within seconds. A first look, measured before the cliff, is
// flagged as a burst with where the rate fell and what it settled at (the
// write-saturation cliff, marked in report.html); held to steady state,
// the rounds settle after the cliff at the platter's rate.
func TestDeviceCliffOnTheLab(t *testing.T) {
	t.Parallel()
	clitest.RequireFio(t)
	clitest.RequireLab(t)
	clitest.SkipWhenBusy(t, "go test -tags integration -run TestDeviceCliffOnTheLab ./internal/cli/e2e/lab/")
	sweep := func(t *testing.T, extra ...string) (*results.Device, string) {
		dir := clitest.StorageDir(t)
		defer clitest.Run(t, "clean", "--path", dir)
		out := filepath.Join(dir, "run")
		args := append([]string{"device", "--lab", "cliff:size=1G", "--path", dir, "--specs", "4k-randwrite:bs=4k,read=0", "--qd", "1",
			"--ramp", "0s", "--size", "256MiB", "--out", out, "--progress", "none"}, extra...)
		code, _, stderr := clitest.Run(t, args...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		clitest.NoLabLeft(t, dir)
		r, err := results.Load(out)
		if err != nil {
			t.Fatal(err)
		}
		d := r.Steps[0].Body.(*results.Device)
		if len(d.Points) != 1 {
			t.Fatalf("%d points", len(d.Points))
		}
		return d, out
	}
	t.Run("first look", func(t *testing.T) {
		t.Parallel()
		d, out := sweep(t, "--runtime", "8s")
		p := d.Points[0]
		skipWhenShared(t, p)
		bu := p.Burst
		if bu == nil {
			t.Fatalf("no burst seen: IOPS each second %v, host-limited fall %+v", p.IOPSPerS, p.HostLimitedFall)
		}
		t.Logf("IOPS each second %v; burst %+v, host %+v", p.IOPSPerS, *bu, bu.Host)
		// The cliff: the rate fell once the cache was full, to the
		// platter's rate, far below the cache's.
		if !d.FreshOutOfBox || !p.FreshOutOfBox || bu.FellAtS < 1 || bu.SettledIOPS > bu.PeakIOPS/2 || bu.WrittenBytesBeforeFall < lab.CliffCacheBytes/2 {
			t.Errorf("fresh_out_of_box %t, burst %+v", d.FreshOutOfBox, *bu)
		}
		// The first look's rate is the burst's share, above the sustained.
		if p.IOPS <= bu.SettledIOPS {
			t.Errorf("the point's %.0f IOPS are not above the settled %.0f", p.IOPS, bu.SettledIOPS)
		}
		html, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil || !strings.Contains(string(html), "Write saturation") || !strings.Contains(string(html), "qd 1 fell") {
			t.Errorf("report.html lacks the write-saturation chart with the fall marked (%v)", err)
		}
	})
	t.Run("steady state", func(t *testing.T) {
		t.Parallel()
		d, _ := sweep(t, "--runtime", "2s", "--steady-state", "--steady-max-rounds", "15")
		p := d.Points[0]
		skipWhenShared(t, p)
		s, bu := p.SteadyState, p.Burst
		if s == nil || !s.Reached || bu == nil || p.FreshOutOfBox {
			t.Fatalf("steady state %+v, burst %+v, IOPS each second %v", s, bu, p.IOPSPerS)
		}
		t.Logf("rounds %v; burst %+v", s.RoundsIOPS, *bu)
		// Reached after the cliff: a round before the window ran above the
		// midpoint of burst and settled rate, every round of the window
		// below it.
		mid := (bu.PeakIOPS + bu.SettledIOPS) / 2
		window := s.RoundsIOPS[s.Round-5 : s.Round]
		before := s.RoundsIOPS[:s.Round-5]
		above := false
		for _, v := range before {
			above = above || v > mid
		}
		for _, v := range window {
			if v > mid {
				t.Errorf("a round of the window ran at %.0f IOPS, above the cliff's midpoint %.0f", v, mid)
			}
		}
		if !above {
			t.Errorf("no round before the window ran above the cliff's midpoint %.0f: the window is not after the cliff", mid)
		}
	})
}

// skipWhenShared skips when another load took the CPU the lab's server
// (calibra's own process, in user space) needs: the tier then runs at the
// speed it is given, not the speeds it is built with, and its cache phase
// can be as slow as its platter or too slow to fill the cache in the run.
// The evidence is the point's and the fall's host figures, which a run
// alone on the machine leaves below the bound.
func skipWhenShared(t *testing.T, p results.DevicePoint) {
	t.Helper()
	// Tests beside this one in the same process count as calibra's own
	// CPU, not another load's: a busy machine is evidence too.
	if ev := p.LimitedByEvidence; ev != nil && (ev.CPUOutsidePct != nil && *ev.CPUOutsidePct >= 20 || ev.CPUBusyPct != nil && *ev.CPUBusyPct >= 80) {
		t.Skipf("other work kept the machine busy over the point (busy %s%%, other loads %s%%), so the lab's tier did not run at its own speeds (IOPS each second %v); run this test alone: go test -tags integration -run TestDeviceCliffOnTheLab ./internal/cli/e2e/lab/",
			results.NumPtr(ev.CPUBusyPct), results.NumPtr(ev.CPUOutsidePct), p.IOPSPerS)
	}
	for _, f := range []*results.DeviceBurst{p.Burst, p.HostLimitedFall} {
		if f == nil || f.Host == nil {
			continue
		}
		if h := f.Host; max(h.OutsidePctBefore, h.OutsidePctAfter) >= 20 {
			t.Skipf("another load used %.0f%% then %.0f%% of the machine, so the lab's tier did not run at its own speeds (IOPS each second %v); run this test alone: go test -tags integration -run TestDeviceCliffOnTheLab ./internal/cli/e2e/lab/",
				h.OutsidePctBefore, h.OutsidePctAfter, p.IOPSPerS)
		}
	}
}
