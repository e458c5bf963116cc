package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"

	"github.com/calibra-bench/calibra/internal/results"
)

// TestStudyStatesTheDeviceShare: after a device step, iocal's points and
// the oltp window state their share of it, the verdict weighs what
// reached the device, and the summary puts the share beside the figure.
func TestStudyStatesTheDeviceShare(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fio and a real PostgreSQL; run without -short")
	}
	clitest.RequirePostgres(t)
	path := clitest.StorageDir(t)
	file := filepath.Join(t.TempDir(), "share.yaml")
	study := `version: 1
name: share
target: {db_cache: 16MB}
steps:
  - kind: device
    specs: [8k-randread, 1m-seqwrite]
    qd: [1]
    size: 64MiB
    ramp: 0s
    runtime: 1s
  - kind: iocal
    size: 64MiB
    jobs: [1]
    tests: [random]
    warmup: 0s
    point: 1s
  - kind: oltp_build
    warehouses: 1
  - kind: oltp
    users: 2
    rampup: 0s
    duration: 2s
`
	if err := os.WriteFile(file, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	stderr := clitest.MustRun(t, 0, "run", "--study", file, "--path", path, "--out", out, "--progress", "none")
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range r.Steps {
		switch body := st.Body.(type) {
		case *results.IOCal:
			p := body.RandomRead.Points[0]
			if p.DeviceSharePct == nil || !strings.HasPrefix(p.DeviceShareOf, "8k-randread at 1 outstanding: ") || body.Missing["device_share"] != "" {
				t.Errorf("iocal point %+v, missing %v", p, body.Missing)
			}
			if p.DiskRIOPS != nil && (p.LimitedByEvidence == nil || p.LimitedByEvidence.DeviceLoadPct == nil) {
				t.Errorf("the device counted reads, yet the verdict did not weigh them: %+v", p.LimitedByEvidence)
			}
		case *results.OLTP:
			if o := st.Observe; o.Disk != nil && (o.DeviceShare == nil || o.DeviceShare.ReadOf == "" && o.DeviceShare.WriteOf == "") {
				t.Errorf("the oltp window states no share of the device: %+v, missing %v", o.DeviceShare, o.Missing)
			}
		}
	}
	if !strings.Contains(stderr, "(of the device's 8k-randread at 1 outstanding: ") {
		t.Errorf("the summary puts no share beside iocal's point:\n%s", stderr)
	}
}
