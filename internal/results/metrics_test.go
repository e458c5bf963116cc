package results

import (
	"math"
	"reflect"
	"testing"
)

func f(v float64) *float64 { return &v }

// A step's metrics name what was measured, with its direction; what was
// not measured is left out, never given as zero.
func TestMetricsLeaveOutWhatWasNotMeasured(t *testing.T) {
	users := 12
	cases := []struct {
		name string
		step Step
		want []string
	}{
		{"oltp measured", Step{Body: &OLTP{NOPM: f(100), TPMDB: f(250), TPMClient: 240, ARTMs: 2, LatMs: &Latency{P90: 3, P99: 5}}},
			[]string{"nopm", "tpm_db", "tpm_client", "art_ms", "p90_ms", "p99_ms"}},
		{"oltp interrupted", Step{Body: &OLTP{Missing: map[string]string{"nopm": "x", "tpm_client": "x"}}}, nil},
		{"ramp within sla", Step{Body: &Ramp{MaxTPS: f(900), MaxUsersWithinSLA: &users}}, []string{"max_tps", "max_users_within_sla"}},
		{"device", Step{Body: &Device{Specs: []DeviceSpec{{Name: "4k-randread", AtMaxLatency: &DeviceBest{IOPS: 9}}, {Name: "1m-seqwrite"}},
			Points: []DevicePoint{{Spec: "4k-randread", QD: 4, IOPS: 9, MBps: 1}}}},
			[]string{"4k-randread.iops_at_max_latency", "4k-randread.qd4.iops", "4k-randread.qd4.mbps"}},
		{"iocal", Step{Body: &IOCal{RandomRead: &IOCalRandom{MaxIOPS: f(5)}, SeqRead: &IOCalSeq{MaxMBPS: 7}}}, []string{"max_iops", "seq_read_max_mbps"}},
		{"dss", Step{Body: &DSS{QphH: f(3), Power: &DSSPower{PowerAtSize: f(4), GeomeanS: f(0.5)}}}, []string{"qphh", "power_at_size", "geomean_s"}},
		{"observe", Step{StepHeader: StepHeader{Observe: &Observe{CPUBusyPct: f(50)}}, Body: &OLTPCheck{}}, []string{"cpu_busy_pct"}},
	}
	for _, c := range cases {
		var got []string
		for _, m := range Metrics(c.step) {
			got = append(got, m.Name)
			if !KnownMetric(kindOf(c.step.Body), m.Name) && m.Name != "4k-randread.qd4.iops" && m.Name != "4k-randread.qd4.mbps" {
				t.Errorf("%s: metric %s is not a known threshold name", c.name, m.Name)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: metrics %v, want %v", c.name, got, c.want)
		}
	}
	if m, ok := LookupMetric(cases[0].step, "art_ms"); !ok || m.Better != LowerIsBetter || m.Value != 2 {
		t.Errorf("art_ms: %+v %v", m, ok)
	}
}

func kindOf(body any) string {
	for kind, mk := range kinds {
		if reflect.TypeOf(mk()) == reflect.TypeOf(body) {
			return kind
		}
	}
	return ""
}

func TestSummariseRepeats(t *testing.T) {
	steps := []Step{
		{Body: &OLTP{NOPM: f(100), TPMClient: 10}},
		{Body: &OLTP{NOPM: f(120), TPMClient: 10}},
		{Body: &OLTP{NOPM: f(90), TPMClient: 10, Missing: map[string]string{}}},
	}
	got := SummariseRepeats(steps)
	if got[0].Name != "nopm" || got[0].Median != 100 || got[0].Min != 90 || got[0].Max != 120 || *got[0].SpreadPct != 30 {
		t.Errorf("nopm: %+v", got[0])
	}
	if got[1].Name != "tpm_client" || *got[1].SpreadPct != 0 {
		t.Errorf("tpm_client: %+v", got[1])
	}
	if Median([]float64{4, 1, 3, 2}) != 2.5 || !math.IsNaN(Median(nil)) {
		t.Error("Median")
	}
}
