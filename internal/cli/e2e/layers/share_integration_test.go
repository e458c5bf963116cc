//go:build integration

package layers

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// checkDeviceShare: after the study's device step, iocal's points and the
// oltp windows state their share of it, the verdict weighs what reached
// the device, and the summary puts the share beside the figure.
func checkDeviceShare(t *testing.T, r *results.Run, stderr string) {
	t.Helper()
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
