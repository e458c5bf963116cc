//go:build integration

package scale

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
)

// TestInstancesOnTheSameStorage builds and drives two managed PostgreSQL
// instances side by side: each server's own counters give its NOPM and
// TPM, which add up to the run's and agree with what its users did; a
// workload that runs on one server refuses the pair; Ctrl-C and clean
// leave no server and no instance behind.
func TestInstancesOnTheSameStorage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real PostgreSQL work; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	outs := t.TempDir()
	common := []string{"--path", path, "--progress", "none", "--instances", "2"}

	clitest.MustRun(t, 0, append([]string{"oltp", "build", "--warehouses", "1", "--out", filepath.Join(outs, "build")}, common...)...)
	_, b := clitest.LastStep[*results.OLTPBuild](t, filepath.Join(outs, "build"))
	if b.Instances != 2 || b.Consistency == nil || !b.Consistency.OK || b.Rows["warehouse"] != 2 {
		t.Fatalf("build of two instances: %d instances, %d warehouse rows in all, consistency %+v", b.Instances, b.Rows["warehouse"], b.Consistency)
	}
	for k := 1; k <= 2; k++ {
		if _, err := os.Stat(filepath.Join(runner.InstancePath(path, k), "calibra-pg")); err != nil {
			t.Errorf("instance %d has no data directory of its own: %v", k, err)
		}
	}

	dir := filepath.Join(outs, "run")
	clitest.MustRun(t, 0, append(append([]string{"oltp", "run", "--users", "4", "--rampup", "1s", "--out", dir}, oltptest.Paced("procedures")...), common...)...)
	clitest.CheckRun(t, dir, "procedures")
	_, o := clitest.LastStep[*results.OLTP](t, dir)
	if len(o.Instances) != 2 {
		t.Fatalf("%d servers' figures, want 2: %+v", len(o.Instances), o.Instances)
	}
	var nopm, tpm float64
	for _, m := range o.Instances {
		if m.Users != 2 || m.NOPM == nil || *m.NOPM <= 0 || m.TPMDB == nil || m.TPMClient <= 0 || m.ARTMs <= 0 {
			t.Fatalf("server %d: %+v (NOPM %v): want 2 users and every figure measured", m.Instance, m, m.NOPM)
		}
		// Each server counts what its own users did, but calibra's few
		// edge statements.
		if d := math.Abs(*m.TPMDB-m.TPMClient) * o.DurationS / 60; d > 10 {
			t.Errorf("server %d: tpm_db %.0f and tpm_client %.0f differ by %.0f transactions", m.Instance, *m.TPMDB, m.TPMClient, d)
		}
		nopm += *m.NOPM
		tpm += *m.TPMDB
	}
	if math.Abs(nopm-*o.NOPM) > 0.01 || math.Abs(tpm-*o.TPMDB) > 0.01 {
		t.Errorf("the servers' NOPM %.2f and tpm_db %.2f do not add up to the run's %.2f and %.2f", nopm, tpm, *o.NOPM, *o.TPMDB)
	}
	// The database's orders are the client's committed New-Orders.
	if got, want := *o.NOPM*o.DurationS/60, float64(o.NewOrderCommits); math.Abs(got-want) > 5+want*0.002 {
		t.Errorf("NOPM holds %.0f orders over the window, the users committed %.0f", got, want)
	}
	r, err := results.Load(dir)
	if err != nil || r.Meta.Engine == nil || r.Meta.Engine.Instances != 2 || !strings.Contains(r.Meta.Engine.Target, filepath.Join("calibra-instances", "2")) {
		t.Errorf("meta.engine does not name both instances: %v %+v", err, r.Meta.Engine)
	}
	for k := 1; k <= 2; k++ {
		if _, err := os.Stat(filepath.Join(dir, "logs", "server-"+string(rune('0'+k))+".log")); err != nil {
			t.Errorf("no log of server %d: %v", k, err)
		}
	}

	// A scale step over 1 and 2 of them: a point each, drawn against servers.
	scale := filepath.Join(outs, "scale")
	clitest.MustRun(t, 0, append(append([]string{"oltp", "scale", "--servers", "1,2", "--users", "4", "--rampup", "1s", "--out", scale}, oltptest.Paced("procedures")...), common...)...)
	_, sc := clitest.LastStep[*results.Scale](t, scale)
	if len(sc.Points) != 2 || sc.Points[0].Servers != 1 || sc.Points[1].Servers != 2 || sc.MaxNOPM == nil {
		t.Fatalf("scale points %+v, max NOPM %v: want one at 1 server and one at 2", sc.Points, sc.MaxNOPM)
	}
	for _, p := range sc.Points {
		if p.NOPM == nil || *p.NOPM <= 0 || p.TPMDB == nil || p.ARTMs <= 0 || p.CPUBusyPct == nil || p.LimitedBy == "" {
			t.Errorf("the point on %d servers lacks a figure: %+v", p.Servers, p)
		}
	}
	html, err := os.ReadFile(filepath.Join(scale, "report.html"))
	if err != nil || !strings.Contains(string(html), "Against servers") || !strings.Contains(string(html), `"servers"`) {
		t.Errorf("report.html draws no figure against servers: %v", err)
	}

	// iocal measures one server: refused in one sentence, nothing kept.
	code, _, stderr := clitest.Run(t, append([]string{"iocal", "--out", filepath.Join(outs, "iocal")}, common...)...)
	if code != 2 || !strings.Contains(stderr, "runs on one server") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("iocal on two instances: exit %d, stderr %q: want exit 2 and one sentence", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(outs, "iocal")); err == nil {
		t.Error("the refused iocal left a run directory")
	}

	code, _ = clitest.InterruptChild(t, "oltp run: 4 users", 2*time.Second, "oltp", "run", "--users", "4", "--rampup", "1s", "--duration", "1m",
		oltptest.PacedFlag, "--out", filepath.Join(outs, "cut"), "--path", path, "--instances", "2", "--progress", "plain")
	if code != 130 {
		t.Errorf("Ctrl-C: exit %d, want 130", code)
	}
	for k := 1; k <= 2; k++ {
		clitest.NoServerLeft(t, runner.InstancePath(path, k))
	}
	if r, err := results.Load(filepath.Join(outs, "cut")); err != nil || r.Status != results.StatusInterrupted {
		t.Errorf("the interrupted run: %v, status %v", err, r)
	}

	said := clitest.MustRun(t, 0, "clean", "--path", path)
	if !strings.Contains(said, "PostgreSQL instance 2 of --instances") {
		t.Errorf("clean did not say it removed instance 2:\n%s", said)
	}
	if _, err := os.Stat(filepath.Join(path, runner.InstancesDir)); !os.IsNotExist(err) {
		t.Errorf("clean left %s: %v", runner.InstancesDir, err)
	}
}
