package results

import (
	"fmt"
	"slices"
	"strings"
)

// Directions of a metric: which way is better.
const (
	HigherIsBetter = "higher"
	LowerIsBetter  = "lower"
)

// Metric is one headline figure of a step, named as thresholds and
// comparisons address it (without the kind: "nopm", "4k-randread.iops").
type Metric struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Better string  `json:"better,omitempty"` // HigherIsBetter, LowerIsBetter or "" (neither)
}

// Metrics lists a step's headline figures in a fixed order. A figure that
// was not measured is left out, never given as zero.
func Metrics(st Step) []Metric {
	var m metricList
	switch b := st.Body.(type) {
	case *OLTP:
		m.oltp(b)
	case *Ramp:
		m.opt("max_tps", b.MaxTPS, "tps", HigherIsBetter)
		if b.MaxUsersWithinSLA != nil {
			m.add("max_users_within_sla", float64(*b.MaxUsersWithinSLA), "users", HigherIsBetter)
		}
		m.opt("art_at_ms", b.ARTAtMs, "ms", LowerIsBetter)
	case *Device:
		m.device(b)
	case *IOCal:
		m.iocal(b)
	case *DSS:
		m.dss(b)
	case *Durability:
		m.add("lost_acknowledged", float64(b.LostAcknowledged), "commits", LowerIsBetter)
		m.add("unverifiable_acknowledged", float64(b.UnverifiableAcknowledged), "commits", LowerIsBetter)
		m.add("cycles", float64(b.Cycles), "", "")
		m.add("pages_damaged", float64(b.PagesDamaged), "pages", LowerIsBetter)
		m.opt("recovery_s", b.RecoveryS, "s", LowerIsBetter)
		if b.Flush != nil {
			m.add("fsyncs_per_s", b.Flush.FsyncsPerS, "/s", "")
		}
	case *Replay:
		m.opt("headroom_x", b.HeadroomX, "x", HigherIsBetter)
		for _, r := range b.Rates {
			m.opt(r.Name+".ratio_1x", r.Ratio1x, "x", "")
		}
	case *Scale:
		m.opt("max_nopm", b.MaxNOPM, "", HigherIsBetter)
	case *OLTPBuild:
		m.add("mb_per_s", b.MBPerS, "MB/s", HigherIsBetter)
		m.add("total_s", b.TotalS, "s", LowerIsBetter)
	case *DSSBuild:
		m.add("mb_per_s", b.MBPerS, "MB/s", HigherIsBetter)
		m.add("total_s", b.TotalS, "s", LowerIsBetter)
	}
	if o := st.Observe; o != nil {
		// Evidence beside the measurement: less waiting on storage is better.
		m.opt("cpu_busy_pct", o.CPUBusyPct, "%", "")
		m.opt("cpu_iowait_pct", o.CPUIOWaitPct, "%", LowerIsBetter)
		if o.Disk != nil {
			m.opt("disk_await_ms", o.Disk.AwaitMs, "ms", LowerIsBetter)
		}
	}
	return m
}

// oltp adds a timed run's rates and latencies, overall and per
// transaction.
func (m *metricList) oltp(b *OLTP) {
	m.opt("nopm", b.NOPM, "", HigherIsBetter)
	m.opt("tpm_db", b.TPMDB, "", HigherIsBetter)
	if b.Missing["tpm_client"] == "" {
		m.add("tpm_client", b.TPMClient, "", HigherIsBetter)
	}
	if b.LatMs != nil {
		m.add("art_ms", b.ARTMs, "ms", LowerIsBetter)
		m.add("p90_ms", b.LatMs.P90, "ms", LowerIsBetter)
		m.add("p99_ms", b.LatMs.P99, "ms", LowerIsBetter)
	}
	m.opt("efficiency_pct", b.EfficiencyPct, "%", HigherIsBetter)
	for _, n := range TxTypes {
		if s, ok := b.Transactions[n]; ok && s.Count > 0 {
			m.add(n+".p90_ms", s.LatMs.P90, "ms", LowerIsBetter)
			m.add(n+".p99_ms", s.LatMs.P99, "ms", LowerIsBetter)
		}
	}
}

// device adds each spec's figure at its latency bound, and each point's.
func (m *metricList) device(b *Device) {
	for _, s := range b.Specs {
		switch {
		case s.AtMaxLatency == nil:
		case s.JudgedOn == "mbps":
			m.add(s.Name+".max_mbps", s.AtMaxLatency.MBps, "MB/s", HigherIsBetter)
		default:
			m.add(s.Name+".iops_at_max_latency", s.AtMaxLatency.IOPS, "IOPS", HigherIsBetter)
		}
	}
	for _, p := range b.Points {
		pre := fmt.Sprintf("%s.qd%d.", p.Spec, p.QD)
		m.add(pre+"iops", p.IOPS, "IOPS", HigherIsBetter)
		m.add(pre+"mbps", p.MBps, "MB/s", HigherIsBetter)
		if p.LatUs != nil {
			m.add(pre+"p99_us", p.LatUs.P99, "µs", LowerIsBetter)
		}
	}
}

// iocal adds the random reads', sequential tests' and commits' figures.
func (m *metricList) iocal(b *IOCal) {
	if r := b.RandomRead; r != nil {
		m.opt("max_iops", r.MaxIOPS, "IOPS", HigherIsBetter)
		m.opt("latency_ms_at_max", r.LatencyMsAtMax, "ms", LowerIsBetter)
		if r.SaturationJobs != nil {
			m.add("saturation_jobs", float64(*r.SaturationJobs), "jobs", HigherIsBetter)
		}
	}
	if b.SeqRead != nil {
		m.add("seq_read_max_mbps", b.SeqRead.MaxMBPS, "MB/s", HigherIsBetter)
	}
	if b.SeqWrite != nil {
		m.add("seq_write_max_mbps", b.SeqWrite.MaxMBPS, "MB/s", HigherIsBetter)
	}
	if c := b.Commit; c != nil {
		m.add("max_commits_ps", c.MaxCommitsPS, "commits/s", HigherIsBetter)
		if l := c.LatencyMsAtOne; l != nil {
			m.add("commit_ms_at_one", l.Mean, "ms", LowerIsBetter)
		}
	}
}

// dss adds the composite figures and each power-test query's time.
func (m *metricList) dss(b *DSS) {
	m.opt("qphh", b.QphH, "", HigherIsBetter)
	if p := b.Power; p != nil {
		m.opt("power_at_size", p.PowerAtSize, "", HigherIsBetter)
		m.opt("geomean_s", p.GeomeanS, "s", LowerIsBetter)
		for _, q := range p.Queries {
			m.opt("power.q"+q.Q+"_s", q.Seconds, "s", LowerIsBetter)
		}
	}
	if t := b.Throughput; t != nil {
		m.opt("throughput_at_size", t.ThroughputAtSize, "", HigherIsBetter)
	}
}

// TxTypes are the TPC-C-like transactions in the specification's order.
var TxTypes = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// MetricNames are the names a threshold may give for a kind, as patterns:
// "*" stands for a name part known only from the run (a device spec).
var MetricNames = map[string][]string{
	KindOLTP:       {"nopm", "tpm_db", "tpm_client", "art_ms", "p90_ms", "p99_ms", "efficiency_pct", "*.p90_ms", "*.p99_ms"},
	KindRamp:       {"max_tps", "max_users_within_sla", "art_at_ms"},
	KindScale:      {"max_nopm"},
	KindDevice:     {"*.iops_at_max_latency"},
	KindIOCal:      {"max_iops", "latency_ms_at_max", "saturation_jobs", "seq_read_max_mbps", "seq_write_max_mbps", "max_commits_ps", "commit_ms_at_one"},
	KindDSS:        {"qphh", "power_at_size", "geomean_s", "throughput_at_size", "power.*"},
	KindOLTPBuild:  {"mb_per_s", "total_s"},
	KindDSSBuild:   {"mb_per_s", "total_s"},
	KindDurability: {"lost_acknowledged", "unverifiable_acknowledged", "pages_damaged", "cycles", "recovery_s", "fsyncs_per_s"},
}

// KnownMetric reports whether name is a metric of kind (observe's CPU
// figures belong to every kind).
func KnownMetric(kind, name string) bool {
	if name == "cpu_busy_pct" || name == "cpu_iowait_pct" || name == "disk_await_ms" {
		return true
	}
	for _, p := range MetricNames[kind] {
		if p == name {
			return true
		}
		if pre, suf, ok := strings.Cut(p, "*"); ok && strings.HasPrefix(name, pre) && strings.HasSuffix(name, suf) && len(name) > len(pre)+len(suf) {
			return true
		}
	}
	return false
}

// LookupMetric finds a step's metric by name.
func LookupMetric(st Step, name string) (Metric, bool) {
	ms := Metrics(st)
	i := slices.IndexFunc(ms, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return ms[i], true
}

type metricList []Metric

func (m *metricList) add(name string, v float64, unit, better string) {
	*m = append(*m, Metric{Name: name, Value: v, Unit: unit, Better: better})
}

func (m *metricList) opt(name string, v *float64, unit, better string) {
	if v != nil {
		m.add(name, *v, unit, better)
	}
}
