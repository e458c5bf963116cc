//go:build integration

package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// TestDSSOnAManagedInstance runs 'dss run' on an empty managed instance
// (it builds SF 0.01 first), then the bad cases that need a server.
func TestDSSOnAManagedInstance(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	if testing.Short() {
		t.Skip("builds and queries a TPC-H-like database on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	clitest.RequireTpchgen(t)
	path, out := clitest.Dirs(t)

	stderr := clitest.MustRun(t, 0, "dss", "run", "--sf", "0.01", "--streams", "2", "--dop", "1", "--path", path,
		"--progress", "none", "--out", out("run"))
	clitest.NoServerLeft(t, path)
	if !strings.Contains(stderr, "dss build  SF 0.01") || !strings.Contains(stderr, "qphh (indicative)") ||
		!strings.Contains(stderr, "scale factor 0.01 is below 1") {
		t.Errorf("the run did not say it built first, or printed no QphH marked indicative with its reason:\n%s", stderr)
	}
	r, err := results.Load(out("run"))
	if err != nil || r.Status != results.StatusComplete || len(r.Steps) != 2 || r.Steps[0].Kind != results.KindDSSBuild {
		t.Fatalf("the run: %v %+v", err, r)
	}
	if b := r.Steps[0].Body.(*results.DSSBuild); !b.RowCheck.OK || b.Rows["lineitem"] != 60_175 || b.Generator == "" {
		t.Errorf("the build: rows %v, check %+v, generator %q", b.Rows, b.RowCheck, b.Generator)
	}
	st, o := clitest.LastStep[*results.DSS](t, out("run"))
	if st.Kind != results.KindDSS || o.Power == nil || len(o.Power.Queries) != 22 || len(o.Power.Refresh) != 2 {
		t.Fatalf("the dss step: %+v", o)
	}
	// At SF 0.01 every query takes well under 0.05 s: by clause 5.3.7.5 each
	// counts as 0.1 s, so Power@Size is 3600 x 0.01 / 0.1.
	if o.Valid == nil || *o.Valid || len(o.InvalidReasons) == 0 || o.Power.PowerAtSize == nil || *o.Power.PowerAtSize > 360.001 {
		t.Errorf("SF 0.01: valid %v (%q), Power@Size %v; want invalid and at most 360", o.Valid, o.InvalidReasons, o.Power.PowerAtSize)
	}
	for _, q := range o.Power.Queries {
		if q.SecondsRounded == nil || *q.SecondsRounded < 0.1 {
			t.Errorf("power Q%s: seconds_rounded %v", q.Q, q.SecondsRounded)
		}
		if q.Seconds == nil || *q.Seconds <= 0 || len(q.Params) == 0 {
			t.Errorf("power Q%s: seconds %v, params %v", q.Q, q.Seconds, q.Params)
		}
	}
	if o.Power.GeomeanS == nil || *o.Power.GeomeanS <= 0 || o.Throughput == nil || o.Throughput.Streams != 2 ||
		len(o.Throughput.StreamRuns) != 2 || o.QphH == nil || *o.QphH <= 0 {
		t.Fatalf("geomean %v, throughput %+v, qphh %v, missing %v", o.Power.GeomeanS, o.Throughput, o.QphH, o.Missing)
	}
	if o.Parallelism["max_parallel_workers_per_gather"] != "1" || !strings.Contains(o.Workload, "not comparable") {
		t.Errorf("parallelism %v, workload %q", o.Parallelism, o.Workload)
	}
	if st.Observe == nil || st.Observe.CPUBusyPct == nil || o.Power.Observe == nil || o.Throughput.Observe == nil {
		t.Errorf("the dss step or one of its tests has no observations of its window: %+v", st.Observe)
	}
	if !o.Throughput.StartedAt.After(o.Power.FinishedAt.Add(-time.Millisecond)) || o.Power.ElapsedS <= 0 {
		t.Errorf("the throughput test started at %v, before the power test ended at %v", o.Throughput.StartedAt, o.Power.FinishedAt)
	}

	// A second build refuses to replace the first without --rebuild; a run
	// at another scale factor than the one built is refused.
	code, _, stderr := clitest.Run(t, "dss", "build", "--sf", "0.01", "--path", path, "--progress", "none", "--out", out("again"))
	if code != 2 || !strings.Contains(stderr, "already built") || !strings.Contains(stderr, "--rebuild") {
		t.Errorf("a second build: exit %d\n%s", code, stderr)
	}
	code, _, stderr = clitest.Run(t, "dss", "power", "--sf", "0.1", "--path", path, "--progress", "none", "--out", out("othersf"))
	if code != 2 || !strings.Contains(stderr, "built at scale factor 0.01, not 0.1") {
		t.Errorf("a power test at another scale factor: exit %d\n%s", code, stderr)
	}

	t.Run("a database without a build through --dsn", func(t *testing.T) {
		dsn := clitest.ExistingServer(t, path)("calibra", "postgres")
		code, _, stderr := clitest.Run(t, "dss", "power", "--dsn", dsn, "--progress", "none", "--out", out("dsn"))
		if code != 2 || !strings.Contains(stderr, "holds no TPC-H-like schema") || !strings.Contains(stderr, "calibra dss build") {
			t.Errorf("power on an unbuilt --dsn: exit %d\n%s", code, stderr)
		}
	})
}

// TestDSSInterruptStopsTheGenerators sends SIGINT to a real calibra in the
// middle of a build: it exits 130, keeps the step as interrupted, and leaves
// neither a server nor a generator behind.
func TestDSSInterruptStopsTheGenerators(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	if testing.Short() {
		t.Skip("loads a TPC-H-like database on a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	clitest.RequireTpchgen(t)
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "build")
	code, stderr := clitest.InterruptChild(t, "dss build: streaming", time.Second, "dss", "build", "--sf", "0.1",
		"--path", path, "--out", out, "--progress", "plain")
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, stderr)
	}
	r, err := results.Load(out)
	if err != nil || r.Status != results.StatusInterrupted || len(r.Steps) != 1 || r.Steps[0].Status != results.StatusInterrupted {
		t.Fatalf("%v %+v", err, r)
	}
	clitest.NoServerLeft(t, path)
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "tpchgen-cli") &&
			strings.Contains(string(b), "--scale-factor\x000.1\x00") {
			t.Errorf("a generator is left: %s", strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
}
