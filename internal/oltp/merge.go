package oltp

import (
	"maps"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/results"
)

// MergePart is one partition of a split run: its step and its window log's
// histograms by transaction type (Record.Window).
type MergePart struct {
	Out    *results.OLTP
	Window map[string]*hist.Histogram
	Dir    string // its run directory, as the merge names it
	Host   string
}

// Merge makes the whole run's step of the partitions of one split run,
// which the caller has found to belong together, exactly one of them the
// counter partition. The database's figures (nopm, tpm_db, checkpoints)
// are the counter partition's; the client's are summed (tpm_client, counts,
// users), latency percentiles come from the merged window histograms, and
// the mix and input checks are judged again on the summed counts.
func Merge(parts []MergePart) *results.OLTP {
	var ctr *results.OLTP
	for _, p := range parts {
		if p.Out.Partition != nil && p.Out.Partition.Index == 1 {
			ctr = p.Out
		}
	}
	out := &results.OLTP{Workload: ctr.Workload, Warehouses: ctr.Warehouses, Mode: ctr.Mode, KeyingThinking: ctr.KeyingThinking,
		RatePerUser: ctr.RatePerUser, RampupS: ctr.RampupS, DurationS: ctr.DurationS, LatencyBasis: ctr.LatencyBasis,
		WindowStart: ctr.WindowStart, WindowEnd: ctr.WindowEnd, NOPM: ctr.NOPM, TPMDB: ctr.TPMDB, EfficiencyPct: ctr.EfficiencyPct,
		CheckpointsInWindow: ctr.CheckpointsInWindow, Profile: ctr.Profile, Missing: maps.Clone(ctr.Missing)}
	if out.Missing == nil {
		out.Missing = map[string]string{}
	}
	out.TPMDB = withoutOthersOwn(ctr, parts)
	m := merger{out: out, all: hist.New()}
	for i := range m.lats {
		m.lats[i] = hist.New()
	}
	for _, p := range parts {
		m.add(p)
	}
	slices.SortFunc(out.Partitions, func(a, b results.PartitionPart) int { return a.Index - b.Index })
	out.TPMClient = results.Round(out.TPMClient, 1)
	out.Missing["driver"] = "each partition's driver ran in its own process, maybe on its own host: see driver in the partitions' run directories"
	m.finish()
	return out
}

// withoutOthersOwn is the counter partition's tpm_db less what the other
// partitions' own sessions committed inside the window (OwnXacts), known
// when every partition held at the window's edges; otherwise as it was.
func withoutOthersOwn(ctr *results.OLTP, parts []MergePart) *float64 {
	if ctr.TPMDB == nil || ctr.DurationS <= 0 {
		return ctr.TPMDB
	}
	var own int64
	for _, p := range parts {
		if p.Out.Partition == nil || !p.Out.Partition.EdgesHeld {
			return ctr.TPMDB
		}
		own += p.Out.Partition.OwnXacts
	}
	v := *ctr.TPMDB - float64(own)*60/ctr.DurationS
	return &v
}

// merger sums the partitions' client figures into out.
type merger struct {
	out   *results.OLTP
	types [numTxTypes]typeStats
	lats  [numTxTypes]*hist.Histogram
	in    inputCounts
	sumMs [numTxTypes]float64
	all   *hist.Histogram
}

// add sums one partition's counts, histograms, notes and warnings.
func (m *merger) add(p MergePart) {
	o, out := p.Out, m.out
	out.Users += o.Users
	out.TPMClient += o.TPMClient
	out.NewOrderCommits += o.NewOrderCommits
	out.Connections += o.Connections
	for i := range m.types {
		tx := o.Transactions[TxType(i).String()]
		m.types[i].add(typeStats{count: tx.Count, rollbacks: tx.Rollbacks, errors: tx.Errors})
		m.sumMs[i] += float64(tx.Count) * tx.LatMs.Mean
		if h := p.Window[TxType(i).String()]; h != nil {
			m.lats[i].Merge(h)
			m.all.Merge(h)
		}
	}
	for class, n := range o.ErrorClasses {
		if out.ErrorClasses == nil {
			out.ErrorClasses = map[string]int64{}
		}
		out.ErrorClasses[class] += n
	}
	m.in.add(inputsOf(o))
	for _, n := range o.Notes {
		if !slices.Contains(out.Notes, n) {
			out.Notes = append(out.Notes, n)
		}
	}
	for _, w := range o.Warnings {
		// The delivery warning is judged again on the sums below.
		if !strings.Contains(w, "clause 2.7.4.2") && !slices.Contains(out.Warnings, w) {
			out.Warnings = append(out.Warnings, w)
		}
	}
	if o.QueueMs != nil {
		out.Missing["queue_ms"] = "each partition's connections served its own users: see queue_ms in the partitions' run directories"
	}
	out.Partitions = append(out.Partitions, results.PartitionPart{Partition: *o.Partition, Dir: p.Dir, Host: p.Host,
		Users: o.Users, TPMClient: o.TPMClient, NewOrderCommits: o.NewOrderCommits, ARTMs: o.ARTMs, DurationS: o.DurationS})
}

// finish judges the summed counts: per-type figures, the mix and input
// checks, delivery's skips and the latency over every partition.
func (m *merger) finish() {
	out := m.out
	out.Transactions = map[string]results.TxStats{}
	out.MixPct = map[string]float64{}
	mix := mixPct(m.types)
	var n int64
	var sum float64
	for i, s := range m.types {
		ts := results.TxStats{Count: s.count, Rollbacks: s.rollbacks, Errors: s.errors}
		if s.count > 0 {
			ts.LatMs = m.lats[i].Summary(m.sumMs[i] / float64(s.count))
		}
		out.Transactions[TxType(i).String()] = ts
		out.MixPct[TxType(i).String()] = results.Round(mix[i], 2)
		n += s.count
		sum += m.sumMs[i]
	}
	out.Checks, out.InvalidReasons = check(m.types, m.in, Profile(out.Profile), out.Users, out.Warehouses)
	if out.Checks != nil {
		valid := len(out.InvalidReasons) == 0
		out.Valid = &valid
	}
	var warn string
	if out.Delivery, warn = deliverySkips(m.types[Delivery].count, m.in.skippedDistricts); warn != "" {
		out.Warnings = append(out.Warnings, warn)
	}
	if n > 0 {
		// Each partition's means are exact to the microsecond it rounds to.
		out.ARTMs = results.Round(sum/float64(n), 3)
		l := m.all.Summary(out.ARTMs)
		out.LatMs = &l
		delete(out.Missing, "art_ms")
	} else if out.Missing["art_ms"] == "" {
		out.Missing["art_ms"] = "no transaction completed in the timed window"
	}
}

// TxNames are the transaction types' names in results.json, in mix order.
func TxNames() []string { return slices.Clone(txNames[:]) }

// inputsOf reads back the drawn inputs a step's checks counted.
func inputsOf(o *results.OLTP) inputCounts {
	var in inputCounts
	for _, c := range o.Checks {
		switch c.Name {
		case bandRemoteLines.name:
			in.remoteLines, in.orderLines = c.Count, c.Of
		case bandRemotePayments.name:
			in.remotePayments = c.Count
		case bandPaymentByName.name:
			in.paymentsByName = c.Count
		case bandStatusByName.name:
			in.orderStatusByName = c.Count
		}
	}
	if o.Delivery != nil {
		in.skippedDistricts = o.Delivery.SkippedDistricts
	}
	return in
}
