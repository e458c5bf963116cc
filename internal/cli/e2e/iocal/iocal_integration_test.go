//go:build integration

package iocal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// TestIOCalOnAManagedInstance runs the three tests at a small size on a
// real managed PostgreSQL and checks the acceptance outcome: points with
// IOPS and latency, max_iops, both sequential maxima, observations, a
// timeseries row a second, and nothing left behind.
func TestIOCalOnAManagedInstance(t *testing.T) {
	t.Parallel() // real servers and fio: they overlap their waits
	if testing.Short() {
		t.Skip("about 40 s of real PostgreSQL work; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	clitest.MustRun(t, 0, "iocal", "--path", path, "--out", out, "--progress", "none", "--size", "448MiB", "--jobs", "1,4",
		"--point", "2s", "--warmup", "0s", "--db-cache", "32MB", "--os-cache-limit", "64MiB")
	clitest.NoServerLeft(t, path)
	st, io := clitest.LastStep[*results.IOCal](t, out)
	if st.Kind != results.KindIOCal || st.Status != results.StatusComplete {
		t.Fatalf("step %s is %s", st.Kind, st.Status)
	}
	if io.BlockSizeBytes != 8192 || io.DataBytes < 440<<20 || io.ColdStarts != 3 {
		t.Errorf("block size %d, data %d bytes, %d cold starts", io.BlockSizeBytes, io.DataBytes, io.ColdStarts)
	}
	// Each cold start evicted every file of the instance from the page cache.
	if io.Limits == nil || io.Limits.OSCacheDropped == nil || !*io.Limits.OSCacheDropped {
		t.Errorf("the cold starts' page cache: %+v (missing %v)", io.Limits, io.Missing)
	}
	r := io.RandomRead
	if r == nil || len(r.Points) != 2 {
		t.Fatalf("random_read: %+v", r)
	}
	for _, p := range r.Points {
		if p.IOPS <= 0 || p.LatMs == nil || p.LatMs.Mean <= 0 || p.CPUBusyPct == nil || p.DBPS <= 0 {
			t.Errorf("random point %+v", p)
		}
	}
	if r.MaxIOPS == nil || *r.MaxIOPS <= 0 {
		t.Errorf("max_iops %v (missing %v)", r.MaxIOPS, io.Missing)
	}
	if io.SeqRead == nil || io.SeqRead.MaxMBPS <= 0 || io.SeqWrite == nil || io.SeqWrite.MaxMBPS <= 0 || io.Commit == nil {
		t.Fatalf("seq_read %+v seq_write %+v commit %+v", io.SeqRead, io.SeqWrite, io.Commit)
	}
	// The server's own figures against the device's, as on MariaDB
	// (TestIOCalServerSideReadsAndCommits).
	checkServerSide(t, "postgresql", io)
	if st.Observe == nil || st.Observe.CPUBusyPct == nil || len(st.Observe.Waits) == 0 {
		t.Errorf("the step has no observations (CPU, waits): %+v", st.Observe)
	} else if why := st.Observe.Missing["waits.failed_polls"]; why != "" {
		// The step's three cold starts break the observers' connection: calibra's own doing, not a failure.
		t.Errorf("the cold starts count as failed polls: %s", why)
	}
	if io.Limits == nil {
		t.Fatal("no limits recorded")
	}
	if io.Limits.CgroupVersion > 0 {
		if io.CacheDominated != "" {
			t.Errorf("cache-dominated with the page cache bounded: %s", io.CacheDominated)
		}
		if _, err := os.Stat(io.Limits.Cgroup); !os.IsNotExist(err) {
			t.Errorf("the cgroup %s was left behind", io.Limits.Cgroup)
		}
	} else if io.CacheDominated == "" {
		t.Error("no cgroup, yet the results do not say cache-dominated")
	}
	csv, err := os.ReadFile(filepath.Join(out, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Count(string(csv), "\n") - 1
	secs := st.FinishedAt.Sub(st.StartedAt).Seconds()
	if float64(rows) < secs-2 || !strings.Contains(string(csv), "cpu_busy_pct") || !strings.Contains(string(csv), "disk_r_iops") {
		t.Errorf("timeseries.csv has %d rows for a %.0f s run", rows, secs)
	}
}
