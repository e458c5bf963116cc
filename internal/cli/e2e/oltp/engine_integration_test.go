//go:build integration

package oltp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// WAL on storage of its own, as the studies put redo on its own disks:
// pg_wal lives under --wal-path, and the oltp step's observations have
// the WAL device's figures beside the data's.
func TestWALOnItsOwnStorage(t *testing.T) {
	t.Parallel()
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root for a loop device and a mount, and is not short")
	}
	clitest.RequirePostgres(t)
	loop := testenv.LoopDevice(t, 1<<30)
	if out, err := exec.Command("mkfs.ext4", "-q", loop).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	wal := clitest.StorageDir(t)
	if out, err := exec.Command("mount", loop, wal).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a loop device here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", wal).Run() })
	if err := os.Chmod(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	clitest.MustRun(t, 0, "oltp", "run", "--warehouses", "1", "--users", "2", "--rampup", "0s", "--duration", "3s", oltptest.PacedFlag,
		"--wal-path", wal, "--path", path, "--progress", "none", "--out", out)

	link, err := os.Readlink(filepath.Join(path, postgres.DataDirName, "pg_wal"))
	if err != nil || link != filepath.Join(wal, postgres.WALDirName) {
		t.Fatalf("pg_wal is %q (%v), want a link to %s", link, err, filepath.Join(wal, postgres.WALDirName))
	}
	st, _ := clitest.LastStep[*results.OLTP](t, out)
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Storage.WAL == nil || r.Meta.Storage.WAL.Device != loop {
		t.Errorf("meta.storage.wal %+v, want the device %s", r.Meta.Storage.WAL, loop)
	}
	o := st.Observe
	if o == nil || len(o.WALDevices) != 1 || "/dev/"+o.WALDevices[0] != loop || o.WALDisk == nil || o.WALDisk.WIOPS == nil || *o.WALDisk.WIOPS <= 0 {
		t.Fatalf("the oltp step's observe has no WAL writes on %s: %+v", loop, o)
	}
	// The data directory stays with its WAL: asking for it elsewhere is
	// refused, not silently ignored.
	other := clitest.StorageDir(t)
	code, _, stderr := clitest.Run(t, "oltp", "run", "--users", "1", "--duration", "1s", "--wal-path", other, "--path", path, "--progress", "none")
	if code != 2 || !strings.Contains(stderr, "keeps its WAL in "+filepath.Join(wal, postgres.WALDirName)) {
		t.Errorf("WAL asked elsewhere: exit %d, %s", code, stderr)
	}
	// clean removes the WAL with its data.
	clitest.MustRun(t, 0, "clean", "--path", path)
	if _, err := os.Stat(filepath.Join(wal, postgres.WALDirName)); !os.IsNotExist(err) {
		t.Errorf("clean left the WAL directory: %v", err)
	}
}

// PostgreSQL 18 from a relocatable build, with an engine setting: the run
// records the version and the setting, and pg_stat_io's reads are
// measured; a value the server refuses is exit 2 in one sentence.
func TestPostgreSQL18WithEngineSettings(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs on a real PostgreSQL; run without -short")
	}
	pg18 := clitest.RequirePostgres18(t)
	path := clitest.StorageDir(t)
	out := filepath.Join(t.TempDir(), "run")
	clitest.MustRun(t, 0, "oltp", "run", "--pg-bin", pg18.Dir, "--engine-setting", "io_method=sync", "--warehouses", "1", "--users", "2",
		"--rampup", "0s", "--duration", "3s", oltptest.PacedFlag, "--path", path, "--progress", "none", "--out", out)
	st, _ := clitest.LastStep[*results.OLTP](t, out)
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Meta.Engine; e == nil || !strings.HasPrefix(e.Version, "18") || e.Settings["io_method"] != "sync" {
		t.Errorf("meta.engine %+v, want version 18 with io_method sync", r.Meta.Engine)
	}
	if st.Observe == nil || st.Observe.DB == nil || st.Observe.DB.ClientReads == nil {
		t.Errorf("pg_stat_io's client reads not measured on 18: %+v", st.Observe)
	}
	code, _, stderr := clitest.Run(t, "oltp", "run", "--pg-bin", pg18.Dir, "--engine-setting", "io_method=bogus", "--users", "1",
		"--duration", "1s", "--path", path, "--progress", "none", "--out", filepath.Join(t.TempDir(), "refused"))
	if code != 2 || !strings.Contains(stderr, `refused the engine setting io_method=bogus: invalid value for parameter "io_method"`) {
		t.Errorf("a refused setting: exit %d, %s", code, stderr)
	}
	// Refused at the first start of a new instance: the data directory the
	// command made goes with it.
	fresh := clitest.StorageDir(t)
	code, _, stderr = clitest.Run(t, "iocal", "--pg-bin", pg18.Dir, "--engine-setting", "io_method=bogus", "--size", "64MiB",
		"--point", "1s", "--path", fresh, "--progress", "none", "--out", filepath.Join(t.TempDir(), "refused"))
	if left, _ := os.ReadDir(fresh); code != 2 || len(left) > 0 {
		t.Errorf("a refused setting on a new instance: exit %d, left %v in --path; %s", code, left, stderr)
	}
}
