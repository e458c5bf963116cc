//go:build integration

package layers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
)

// --steady-state, tiny: the region preconditioned twice over in 128 KiB
// writes, then five 1 s rounds (the round limit, one window), judged; the
// point's figures from the window, every round's files and IOPS log kept.
func TestDeviceSteadyState(t *testing.T) {
	t.Parallel() // real fio: it overlaps its waits
	clitest.RequireFio(t)
	target, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	code, _, stderr := clitest.Run(t, "device", "--path", target, "--specs", "8k-randwrite", "--qd", "2", "--runtime", "2s", "--ramp", "0s",
		"--size", "16MiB", "--steady-state", "--steady-max-rounds", "5", "--out", out, "--progress", "plain")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Steps[0].Body.(*results.Device)
	m := d.SteadyState
	if d.FreshOutOfBox || m == nil || m.PreconditionBytes != 32<<20 || m.PreconditionBlock != 128<<10 || m.MaxRounds != 5 || m.WindowRounds != 5 {
		t.Fatalf("fresh_out_of_box %t, method %+v", d.FreshOutOfBox, m)
	}
	prep, err := os.ReadFile(filepath.Join(out, "raw", "prepare.fio"))
	if err != nil || !strings.Contains(string(prep), "loops=2\n") || !strings.Contains(string(prep), "bs=131072\n") {
		t.Errorf("the preconditioning job (%v):\n%s", err, prep)
	}
	if len(d.Points) != 1 {
		t.Fatalf("%d points", len(d.Points))
	}
	p := d.Points[0]
	s := p.SteadyState
	if s == nil || s.Round != 5 || len(s.RoundsIOPS) != 5 || len(p.Raw) != 5 || p.Repeats != 1 {
		t.Fatalf("point %+v, steady %+v", p, s)
	}
	if s.RangePct == nil || s.SlopePct == nil || s.Reached != (*s.RangePct <= 20 && *s.SlopePct <= 10) {
		t.Errorf("the judgement does not follow its figures: %+v", s)
	}
	for i, name := range p.Raw {
		if want := fmt.Sprintf("001-8k-randwrite-qd2-round%02d", i+1); name != want {
			t.Errorf("round %d is %s, want %s", i+1, name, want)
		}
		for _, ext := range []string{".fio", ".json", "_iops.1.log"} {
			if _, err := os.Stat(filepath.Join(out, "raw", name+ext)); err != nil {
				t.Errorf("raw/: %v", err)
			}
		}
	}
	// fio logs each whole second of a round (not its last part): rounds of
	// 2 s hold one at least, even on a busy host.
	if len(p.IOPSPerS) == 0 || len(p.WriteIOPSPerS) != len(p.IOPSPerS) {
		t.Errorf("IOPS each second: %v, writes %v", p.IOPSPerS, p.WriteIOPSPerS)
	}
	for _, want := range []string{"preconditioning the test regions", "rounds of 2s each until steady state (at most 5 rounds)", "method     steady state (SNIA PTS)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// The convergence chart, drawn in a browser: steady at its round, or
	// not after how many.
	verdict := fmt.Sprintf("8k-randwrite qd 2: steady at round %d", s.Round)
	if !s.Reached {
		verdict = fmt.Sprintf("8k-randwrite qd 2: not steady after %d rounds", len(s.RoundsIOPS))
	}
	res := browsertest.New(t).Open(t, filepath.Join(out, "report.html"))
	if len(res.Errors) > 0 || len(res.Unrendered) > 0 || len(res.Charts) == 0 {
		t.Fatalf("report.html: errors %q, undrawn %v, %d charts", res.Errors, res.Unrendered, len(res.Charts))
	}
	for id, drawn := range res.Charts {
		if drawn < 0.01 {
			t.Errorf("chart %s is blank", id)
		}
	}
	for _, want := range []string{"Convergence to steady state", verdict} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("report.html does not show %q", want)
		}
	}
}
