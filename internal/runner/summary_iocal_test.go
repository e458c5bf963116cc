package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// An iocal point's warning (few operations, or operations that outlasted
// it) is said in the summary, under the step.
func TestIOCalSummarySaysWarnings(t *testing.T) {
	w := "seqwrite at 16 jobs was measured from 16 operations (fewer than 30): its latency mean and p99 are rough"
	var b strings.Builder
	writeIOCalSummary(&b, results.Step{}, &results.IOCal{SeqWrite: &results.IOCalSeq{Points: []results.IOCalPoint{{Jobs: 16, MBPS: 20}}}, Warnings: []string{w}})
	if !strings.Contains(b.String(), "  warning: "+w+"\n") {
		t.Errorf("summary:\n%s\nlacks the warning %q", b.String(), w)
	}
}

// Each point's share of the device step stands beside its figure; a run
// without a device step says so once; the server's io_method is named.
func TestIOCalSummarySaysTheDeviceShare(t *testing.T) {
	pct := 71.0
	for _, c := range []struct {
		name string
		io   *results.IOCal
		want []string
	}{
		{"with a device step", &results.IOCal{IOMethod: "worker", RandomRead: &results.IOCalRandom{Points: []results.IOCalPoint{
			{Jobs: 16, IOPS: 59696, DeviceSharePct: &pct, DeviceShareOf: "4k-randread at 16 outstanding: 84402 IOPS"}}}},
			[]string{"59696", "71%", "(of the device's 4k-randread at 16 outstanding: 84402 IOPS)", "s points, io_method worker ("}},
		{"a write point, with what the device wrote", &results.IOCal{SeqWrite: &results.IOCalSeq{Points: []results.IOCalPoint{
			{Jobs: 1, MBPS: 168.8, DeviceSharePct: ptr1(7.2), DeviceShareOf: "1m-seqwrite at 1 outstanding: 2345.6 MB/s", DiskWMBPS: ptr1(417.06), DiskWSharePct: ptr1(17.8)}}}},
			[]string{"168.8", "7%", "(of the device's 1m-seqwrite at 1 outstanding: 2345.6 MB/s); the device wrote 417.1 MB/s, 18% of it\n"}},
		{"without", &results.IOCal{RandomRead: &results.IOCalRandom{Points: []results.IOCalPoint{{Jobs: 1, IOPS: 5}, {Jobs: 2, IOPS: 9}}},
			Missing: map[string]string{"device_share": "no device step ran before iocal in this run"}},
			[]string{"of device n/a: no device step ran before iocal in this run\n"}},
	} {
		var b strings.Builder
		writeIOCalSummary(&b, results.Step{}, c.io)
		for _, w := range c.want {
			if strings.Count(b.String(), w) != 1 {
				t.Errorf("%s: summary\n%s\nsays %q other than once", c.name, b.String(), w)
			}
		}
	}
}
