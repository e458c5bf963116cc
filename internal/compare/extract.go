package compare

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
)

// figure is one metric's value in one step.
type figure struct {
	Metric
	value float64
}

// txOrder is the TPC-C transactions in the spec's order.
var txOrder = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// extract lists a step's comparable figures. Unmeasured figures (null) are
// left out, never compared as zero. load is the user load at which the
// ramps' ART is compared (0: none shared).
func extract(st results.Step, load int) []figure {
	step := st.Kind + "/" + st.Name
	var out []figure
	add := func(name, unit string, higher bool, v float64) {
		out = append(out, figure{Metric{Step: step, Name: name, Unit: unit, Higher: higher}, v})
	}
	opt := func(name, unit string, higher bool, v *float64) {
		if v != nil {
			add(name, unit, higher, *v)
		}
	}
	switch b := st.Body.(type) {
	case *results.Device:
		for _, s := range b.Specs {
			if s.AtMaxLatency != nil {
				add(s.Name+" IOPS within bound", "IOPS", true, s.AtMaxLatency.IOPS)
			}
		}
		for _, p := range b.Points {
			at := fmt.Sprintf("%s qd %d", p.Spec, p.QD)
			add(at+" IOPS", "IOPS", true, p.IOPS)
			add(at+" MB/s", "MB/s", true, p.MBps)
			if p.LatUs != nil {
				add(at+" p99", "µs", false, p.LatUs.P99)
			}
		}
	case *results.IOCal:
		if r := b.RandomRead; r != nil {
			opt("max IOPS", "IOPS", true, r.MaxIOPS)
			opt("latency at max IOPS", "ms", false, r.LatencyMsAtMax)
		}
		if b.SeqRead != nil {
			add("seq read max MB/s", "MB/s", true, b.SeqRead.MaxMBPS)
		}
		if b.SeqWrite != nil {
			add("seq write max MB/s", "MB/s", true, b.SeqWrite.MaxMBPS)
		}
	case *results.OLTP:
		opt("NOPM", "", true, b.NOPM)
		opt("TPM (db)", "", true, b.TPMDB)
		add("TPM (client)", "", true, b.TPMClient)
		add("ART", "ms", false, b.ARTMs)
		for _, n := range txOrder {
			if s, ok := b.Transactions[n]; ok && s.Count > 0 {
				add(n+" p90", "ms", false, s.LatMs.P90)
				add(n+" p99", "ms", false, s.LatMs.P99)
			}
		}
	case *results.Ramp:
		if b.MaxTPS != nil {
			out = append(out, figure{Metric{Step: step, Name: "max TPS", Unit: "TPS", Higher: true, Headline: true}, *b.MaxTPS})
		}
		for _, s := range b.Steps {
			if load > 0 && s.Users == load {
				out = append(out, figure{Metric{Step: step, Name: fmt.Sprintf("ART at %d users", load), Unit: "ms", Headline: true}, s.ARTMs})
			}
		}
		if b.MaxUsersWithinSLA != nil {
			out = append(out, figure{Metric{Step: step, Name: fmt.Sprintf("users within %s ≤ %g ms", b.SLAMetric, b.SLAMs), Unit: "users",
				Higher: true, Headline: true}, float64(*b.MaxUsersWithinSLA)})
		}
	case *results.DSS:
		if b.Power != nil {
			opt("geomean", "s", false, b.Power.GeomeanS)
			opt("Power@Size", "", true, b.Power.PowerAtSize)
			for _, q := range b.Power.Queries {
				opt("Q"+q.Q, "s", false, q.Seconds)
			}
		}
		if b.Throughput != nil {
			opt("Throughput@Size", "", true, b.Throughput.ThroughputAtSize)
		}
		opt("QphH", "", true, b.QphH)
	case *results.OLTPBuild:
		add("build MB/s", "MB/s", true, b.MBPerS)
	case *results.DSSBuild:
		add("build MB/s", "MB/s", true, b.MBPerS)
	}
	if o := st.Observe; o != nil {
		// Evidence beside the measurement: less waiting on storage.
		opt("I/O wait", "%", false, o.CPUIOWaitPct)
		if o.Disk != nil {
			opt("disk await", "ms", false, o.Disk.AwaitMs)
		}
	}
	return out
}

// rampLoad is the user load at which ART is compared across the runs'
// ramps: the base's named load (art_at_users) if every run reached it,
// else the highest load every run's ramp reached.
func rampLoad(runs []Run) int {
	var sets []map[int]bool
	named := 0
	for i, r := range runs {
		loads := map[int]bool{}
		for _, st := range r.Steps {
			if b, ok := st.Body.(*results.Ramp); ok {
				for _, s := range b.Steps {
					loads[s.Users] = true
				}
				if i == 0 && b.ARTAtUsers != nil {
					named = *b.ARTAtUsers
				}
			}
		}
		if len(loads) == 0 {
			return 0
		}
		sets = append(sets, loads)
	}
	inAll := func(u int) bool {
		for _, s := range sets {
			if !s[u] {
				return false
			}
		}
		return true
	}
	if named > 0 && inAll(named) {
		return named
	}
	best := 0
	for u := range sets[0] {
		if u > best && inAll(u) {
			best = u
		}
	}
	return best
}
