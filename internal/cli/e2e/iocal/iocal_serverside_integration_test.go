//go:build integration

package iocal

import (
	"path/filepath"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// Tolerances of the server's figures against the device's. The device
// under the path is shared (other work on the machine adds to its
// counters), so the device side is bounded from below only.
const (
	// deviceShareOfServerReads: of the blocks the server counted reading
	// from the OS, at least this share reached the device (the page cache
	// is bounded to a fraction of the data and dropped before the test).
	deviceShareOfServerReads = 0.7
	// serverReadsOfRows bounds the server's block reads per row returned:
	// at least the share not found in its cache (bounded well below the
	// data), at most one and the B-tree's inner pages (InnoDB: one page a
	// lookup of a page's middle record).
	serverReadsOfRowsLow, serverReadsOfRowsHigh = 0.5, 1.2
	// walSyncsPerCommit bounds the server's WAL syncs per commit of one
	// committer: one each, a few background ones aside.
	walSyncsPerCommitLow, walSyncsPerCommitHigh = 0.8, 1.3
	// deviceWritesOfSyncs: each WAL sync wrote at least once to the device.
	deviceWritesOfSyncs = 0.8
	// commitSpanSlack: one committer's mean commit, as its server timed
	// it, lies within the time between its commits and at least the
	// server's mean WAL sync, each give or take this share.
	commitSpanSlack = 0.1
	// walOfTable: the server's WAL (redo) took at least this share of the
	// table's MB/s: each row a write point inserts is logged whole.
	walOfTable = 0.7
	// deviceOfWAL: the device wrote at least this share of the WAL the
	// server wrote (and synced at each commit) in a write point's window.
	deviceOfWAL = 0.8
)

// TestIOCalServerSideReadsAndCommits runs the server-side random read,
// sequential write and commit tests on MariaDB and checks that the reads
// the calls returned, the reads the server counted and the reads that
// reached the device agree, and so do the table's writes, the redo log's
// and the device's, and the commits, the server's log syncs and the
// device's writes, within the tolerances above. PostgreSQL's are checked
// on TestIOCalOnAManagedInstance's run.
func TestIOCalServerSideReadsAndCommits(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real database work; run without -short")
	}
	clitest.RequireEngine(t, "mariadb")
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	clitest.MustRun(t, 0, "iocal", "--engine", "mariadb", "--path", path, "--out", out, "--progress", "none", "--size", "256MiB",
		"--jobs", "1,4", "--tests", "random,seqwrite,wal", "--point", "2s", "--warmup", "0s", "--db-cache", "32MB", "--os-cache-limit", "64MiB")
	clitest.NoServerLeft(t, path)
	_, io := clitest.LastStep[*results.IOCal](t, out)
	checkServerSide(t, "mariadb", io)
}

// checkServerSide holds every point of io's random read, sequential write
// and commit tests to the tolerances above.
func checkServerSide(t *testing.T, engine string, io *results.IOCal) {
	t.Helper()
	if io.RandomRead == nil || io.SeqWrite == nil || io.Commit == nil || io.ReadsPerCall != 256 {
		t.Fatalf("random_read %+v, seq_write %+v, commit %+v, reads per call %d", io.RandomRead, io.SeqWrite, io.Commit, io.ReadsPerCall)
	}
	for _, p := range io.SeqWrite.Points {
		checkServerWrites(t, engine, p)
	}
	for _, p := range io.RandomRead.Points {
		checkServerReads(t, p)
	}
	for _, p := range io.Commit.Points {
		checkCommits(t, p)
	}
}

func checkServerReads(t *testing.T, p results.IOCalPoint) {
	t.Helper()
	if p.RowsPS <= 0 || p.ServerReadsPS == nil || p.DiskRIOPS == nil || p.ServerReadMs == nil || p.DiskRAwaitMs == nil {
		t.Fatalf("random point at %d jobs lacks a figure: %+v", p.Jobs, p)
	}
	if p.LimitedBy == "driver" {
		t.Errorf("random point at %d jobs limited by driver: %s", p.Jobs, p.LimitedByEvidence.Rule)
	}
	server, dev := *p.ServerReadsPS, *p.DiskRIOPS
	if r := server / p.RowsPS; r < serverReadsOfRowsLow || r > serverReadsOfRowsHigh {
		t.Errorf("%d jobs: the server read %.0f blocks/s for %.0f rows/s (%.2f a row, want %.1f to %.1f)",
			p.Jobs, server, p.RowsPS, r, serverReadsOfRowsLow, serverReadsOfRowsHigh)
	}
	if dev < deviceShareOfServerReads*server {
		t.Errorf("%d jobs: %.0f reads/s reached the device of the %.0f the server counted (want ≥ %.0f%%)",
			p.Jobs, dev, server, 100*deviceShareOfServerReads)
	}
	t.Logf("%d jobs: rows %.0f/s, server reads %.0f/s at %.3f ms, device %.0f/s at %.3f ms await",
		p.Jobs, p.RowsPS, server, *p.ServerReadMs, dev, *p.DiskRAwaitMs)
}

func checkServerWrites(t *testing.T, engine string, p results.IOCalPoint) {
	t.Helper()
	if p.MBPS <= 0 || p.DiskWMBPS == nil || p.WALMBPS == nil || p.DataWMBPS == nil || (engine == "postgresql") != (p.WALFPIPS != nil) {
		t.Fatalf("seqwrite point at %d jobs lacks a figure (or has full-page images on %s): %+v", p.Jobs, engine, p)
	}
	if p.LimitedBy == "driver" {
		t.Errorf("seqwrite point at %d jobs, written by the server, limited by driver: %s", p.Jobs, p.LimitedByEvidence.Rule)
	}
	if *p.WALMBPS < walOfTable*p.MBPS {
		t.Errorf("%d jobs: the server wrote %.1f MB/s of WAL for %.1f MB/s of table (want ≥ %.0f%%)", p.Jobs, *p.WALMBPS, p.MBPS, 100*walOfTable)
	}
	if *p.DiskWMBPS < deviceOfWAL**p.WALMBPS {
		t.Errorf("%d jobs: the device wrote %.1f MB/s for the server's %.1f MB/s of WAL (want ≥ %.0f%%)", p.Jobs, *p.DiskWMBPS, *p.WALMBPS, 100*deviceOfWAL)
	}
	t.Logf("%d jobs: table %.1f MB/s, data files %.1f, WAL %.1f, device %.1f MB/s, limited by %s", p.Jobs, p.MBPS, *p.DataWMBPS, *p.WALMBPS, *p.DiskWMBPS, p.LimitedBy)
}

func checkCommits(t *testing.T, p results.IOCalPoint) {
	t.Helper()
	if p.CommitsPS <= 0 || p.LatMs == nil || p.DiskWIOPS == nil || p.WALWritesPS == nil {
		t.Fatalf("commit point at %d jobs lacks a figure: %+v", p.Jobs, p)
	}
	syncs := p.WALSyncsPS
	if syncs == nil {
		t.Fatalf("commit point at %d jobs has no WAL syncs: %+v", p.Jobs, p)
	}
	if p.Jobs == 1 {
		if r := *syncs / p.CommitsPS; r < walSyncsPerCommitLow || r > walSyncsPerCommitHigh {
			t.Errorf("one committer: %.0f WAL syncs/s for %.0f commits/s (%.2f each, want %.1f to %.1f)",
				*syncs, p.CommitsPS, r, walSyncsPerCommitLow, walSyncsPerCommitHigh)
		}
		if between := 1000 / p.CommitsPS; p.LatMs.Mean > between*(1+commitSpanSlack) {
			t.Errorf("one committer: a commit took %.3f ms, more than the %.3f ms between commits", p.LatMs.Mean, between)
		}
		if p.ServerSyncMs != nil && p.LatMs.Mean < *p.ServerSyncMs*(1-commitSpanSlack) {
			t.Errorf("one committer: a commit took %.3f ms, less than the server's WAL sync of %.3f ms", p.LatMs.Mean, *p.ServerSyncMs)
		}
	}
	if *p.DiskWIOPS < deviceWritesOfSyncs**syncs {
		t.Errorf("%d committers: %.0f writes/s reached the device for %.0f WAL syncs/s", p.Jobs, *p.DiskWIOPS, *syncs)
	}
	t.Logf("%d committers: %.0f commits/s, %.3f ms mean, WAL syncs %.0f/s, device writes %.0f/s", p.Jobs, p.CommitsPS, p.LatMs.Mean, *syncs, *p.DiskWIOPS)
}
