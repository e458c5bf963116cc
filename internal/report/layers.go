package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

var nan = math.NaN()

func (b *builder) device(d *results.Device) {
	var specs []string
	bySpec := map[string][]results.DevicePoint{}
	for _, p := range d.Points {
		if _, ok := bySpec[p.Spec]; !ok {
			specs = append(specs, p.Spec)
		}
		bySpec[p.Spec] = append(bySpec[p.Spec], p)
	}
	series := func(f func(p results.DevicePoint) float64) []assets.Series {
		var out []assets.Series
		for _, s := range specs {
			var x, y []float64
			for _, p := range bySpec[s] {
				x = append(x, float64(p.QD))
				y = append(y, f(p))
			}
			out = append(out, assets.Series{Name: s, X: assets.Nums(x), Y: assets.Nums(y)})
		}
		return out
	}
	p99 := func(p results.DevicePoint) float64 {
		if p.LatUs == nil {
			return nan
		}
		return p.LatUs.P99
	}
	lat := assets.Chart{XName: "queue depth per worker", YName: "p99 latency µs", XLog: true, Series: series(p99)}
	// Series ten times apart (a 1m write against 4k reads) read on a log
	// axis; on a linear one the low ones lie flat on the floor.
	lo, hi := math.Inf(1), 0.0
	for _, p := range d.Points {
		if p.LatUs != nil && p.LatUs.P99 > 0 {
			lo, hi = min(lo, p.LatUs.P99), max(hi, p.LatUs.P99)
		}
	}
	lat.YLog = hi >= 10*lo
	if d.MaxLatencyUs > 0 {
		lat.MarkY = []assets.Mark{{Label: "bound " + results.Num(d.MaxLatencyUs) + " µs", Value: d.MaxLatencyUs}}
	}
	b.charts("Against queue depth",
		b.chart("IOPS", assets.Chart{XName: "queue depth per worker", YName: "IOPS", XLog: true,
			Series: series(func(p results.DevicePoint) float64 { return p.IOPS })}),
		b.chart("MB/s", assets.Chart{XName: "queue depth per worker", YName: "MB/s", XLog: true,
			Series: series(func(p results.DevicePoint) float64 { return p.MBps })}),
		b.chart("p99 latency", lat))

	best := Table{Caption: fmt.Sprintf("Each spec's answer: random specs, the best IOPS with p99 ≤ %s µs; sequential ones, the best MB/s (no errors)", results.Num(d.MaxLatencyUs)),
		Head: []string{"spec", "judged on", "qd", "IOPS", "MB/s", "p99 µs", "limited by"}, Headline: true}
	for _, s := range d.Specs {
		judged := "p99 bound"
		if s.JudgedOn == "mbps" {
			judged = "MB/s"
		}
		if s.AtMaxLatency == nil {
			best.Rows = append(best.Rows, append(cells(s.Name, judged), Cell{Text: "none: " + s.AtMaxLatencyMissing, Class: "bad"}, Cell{}, Cell{}, Cell{}, Cell{}))
			continue
		}
		a := s.AtMaxLatency
		row := cells(s.Name, judged, strconv.Itoa(a.QD), results.Num(a.IOPS), results.Num(a.MBps), results.Num(a.P99Us), a.LimitedBy)
		row[1].Class, row[6].Class = "t", "t"
		best.Rows = append(best.Rows, row)
		if s.JudgedOn == "mbps" {
			b.card(s.Name+" MB/s", results.Num(a.MBps), "MB/s", fmt.Sprintf("at qd %d", a.QD), a.LimitedBy)
		} else {
			b.card(s.Name+" IOPS", results.Num(a.IOPS), "IOPS", fmt.Sprintf("at qd %d, p99 %s µs", a.QD, results.Num(a.P99Us)), a.LimitedBy)
		}
	}
	b.table(best)

	b.devicePoints(d)
	b.deviceAtBounds(d, specs, bySpec)
	b.deviceBursts(d)
	b.deviceWSAT(specs, bySpec)
	b.deviceSteady(d)
	b.sec.Notes = append(b.sec.Notes, d.Notes...)
}

// devicePoints tables every point of a sweep.
func (b *builder) devicePoints(d *results.Device) {
	pts := Table{Caption: fmt.Sprintf("Every point (fio %s, %s, direct=%t, %s s each, latency: %s)", d.FioVersion, d.IOEngine, d.Direct, results.Num(d.RuntimeS), d.LatencyBasis),
		Head: []string{"spec", "qd", "workers", "IOPS", "MB/s", "mean µs", "p50 µs", "p99 µs", "p99.9 µs", "p99.99 µs", "max µs", "errors", "limited by"}, Headline: true}
	for _, p := range d.Points {
		row := cells(p.Spec, strconv.Itoa(p.QD), strconv.Itoa(p.Workers), results.Num(p.IOPS), results.Num(p.MBps))
		if p.LatUs != nil {
			l := p.LatUs
			row = append(row, cells(results.Num(l.Mean), results.Num(l.P50), results.Num(l.P99), results.Num(l.P999), results.NumPtr(l.P9999), results.Num(l.Max))...)
			row[5].Class = ""
		} else {
			row = append(row, Cell{Text: "n/a"}, Cell{Text: "n/a"}, Cell{Text: "n/a"}, Cell{Text: "n/a"}, Cell{Text: "n/a"}, Cell{Text: "n/a"})
		}
		e := Cell{Text: results.Int(p.Errors)}
		if p.Errors > 0 {
			e.Class = "bad"
		}
		pts.Rows = append(pts.Rows, append(row, e, Cell{Text: p.LimitedBy, Class: "t"}))
	}
	b.table(pts)
}

func (b *builder) iocal(c *results.IOCal) {
	if c.CacheDominated != "" {
		b.sec.Notes = append(b.sec.Notes, "Results may be cache-dominated: "+c.CacheDominated)
	}
	if c.IOMethod != "" {
		b.sec.Notes = append(b.sec.Notes, "The server issued its reads with io_method "+c.IOMethod+".")
	}
	if rr := c.RandomRead; rr != nil {
		var jobs, iops, mean []float64
		for _, p := range rr.Points {
			jobs = append(jobs, float64(p.Jobs))
			iops = append(iops, p.IOPS)
			if p.LatMs != nil {
				mean = append(mean, p.LatMs.Mean)
			} else {
				mean = append(mean, nan)
			}
		}
		ch := assets.Chart{XName: "parallel jobs", YName: "IOPS", Y2Name: "mean latency ms", XLog: true, X: assets.Nums(jobs),
			Series: []assets.Series{{Name: "IOPS", Y: assets.Nums(iops)}, {Name: "mean latency ms", Y: assets.Nums(mean), Y2: true, Dashed: true}},
			MarkY:  []assets.Mark{{Label: "max latency " + results.Num(rr.MaxLatencyMs) + " ms", Value: rr.MaxLatencyMs, Y2: true}}}
		if rr.SaturationJobs != nil {
			ch.MarkX = []assets.Mark{{Label: fmt.Sprintf("saturation at %d jobs", *rr.SaturationJobs), Value: float64(*rr.SaturationJobs)}}
		}
		refs := []ChartRef{b.chart("Random single-block reads", ch)}
		b.iocalCard("iocal max IOPS", rr.MaxPoint(), func(p *results.IOCalPoint) float64 { return p.IOPS }, "IOPS", fmt.Sprintf("mean latency ≤ %s ms", results.Num(rr.MaxLatencyMs)))
		seq := assets.Chart{XName: "parallel jobs", YName: "MB/s", XLog: true}
		for _, s := range []struct {
			name string
			sw   *results.IOCalSeq
		}{{"sequential read", c.SeqRead}, {"sequential write", c.SeqWrite}} {
			if s.sw == nil {
				continue
			}
			var x, y []float64
			for _, p := range s.sw.Points {
				x = append(x, float64(p.Jobs))
				y = append(y, p.MBPS)
			}
			seq.Series = append(seq.Series, assets.Series{Name: s.name, X: assets.Nums(x), Y: assets.Nums(y)})
			b.iocalCard("iocal max MB/s, "+s.name, s.sw.MaxPoint(), func(p *results.IOCalPoint) float64 { return p.MBPS }, "MB/s", "")
		}
		if len(seq.Series) > 0 {
			refs = append(refs, b.chart("Sequential MB/s", seq))
		}
		b.charts("Against parallel jobs", refs...)
		sat := "n/a"
		if rr.SaturationJobs != nil {
			sat = strconv.Itoa(*rr.SaturationJobs)
		}
		b.table(Table{Caption: "Calibration (CALIBRATE_IO's rule: the highest point whose mean latency stays at or under the bound)",
			Head:     []string{"max IOPS", "device reads/s at max", "latency at max ms", "max latency ms", "saturation jobs", "seq read max MB/s", "seq write max MB/s"},
			Rows:     [][]Cell{cells(results.NumPtr(rr.MaxIOPS), results.NumPtr(rr.DeviceIOPSAtMax), results.NumPtr(rr.LatencyMsAtMax), results.Num(rr.MaxLatencyMs), sat, seqMax(c.SeqRead), seqMax(c.SeqWrite))},
			Headline: true})
	}
	b.iocalPoints(c)
	b.missing(c.Missing)
	b.sec.Notes = append(b.sec.Notes, c.Notes...)
}

// iocalPoints are the tables of every test's points, each with what
// limited it.
func (b *builder) iocalPoints(c *results.IOCal) {
	lat := func(p results.IOCalPoint) (string, string) {
		if p.LatMs == nil {
			return "n/a", "n/a"
		}
		return results.Num(p.LatMs.Mean), results.Num(p.LatMs.P99)
	}
	for _, r := range []struct {
		name string
		rr   *results.IOCalRandom
	}{{"random read", c.RandomRead}, {"client read (one block a query)", c.ClientRead}} {
		if r.rr == nil || len(r.rr.Points) == 0 {
			continue
		}
		t := Table{Caption: "Points, " + r.name, Headline: true,
			Head: []string{"jobs", "IOPS", "db blocks/s", "device reads/s", "MB/s", "mean ms", "p99 ms", "CPU busy %", "CPU sys %", "seconds", "limited by"}}
		for _, p := range r.rr.Points {
			mean, p99 := lat(p)
			row := cells(strconv.Itoa(p.Jobs), results.Num(p.IOPS), results.Num(p.DBPS), results.NumPtr(p.DiskRIOPS), results.Num(p.MBPS), mean, p99, results.NumPtr(p.CPUBusyPct), results.NumPtr(p.CPUSysPct), results.Num(p.Seconds), p.LimitedBy)
			row[10].Class = "t"
			t.Rows = append(t.Rows, row)
		}
		b.table(withShares(t, r.rr.Points))
	}
	for _, s := range []struct {
		name string
		sw   *results.IOCalSeq
	}{{"sequential read", c.SeqRead}, {"sequential write", c.SeqWrite}} {
		if s.sw == nil {
			continue
		}
		t := Table{Caption: "Points, " + s.name, Headline: true, Head: []string{"jobs", "MB/s", "CPU busy %", "CPU sys %", "seconds", "limited by"}}
		for _, p := range s.sw.Points {
			row := cells(strconv.Itoa(p.Jobs), results.Num(p.MBPS), results.NumPtr(p.CPUBusyPct), results.NumPtr(p.CPUSysPct), results.Num(p.Seconds), p.LimitedBy)
			row[5].Class = "t"
			t.Rows = append(t.Rows, row)
		}
		if s.sw == c.SeqWrite {
			t = withWrites(t, s.sw.Points, b.r.words.Log)
		}
		b.table(withShares(t, s.sw.Points))
	}
	if cm := c.Commit; cm != nil && len(cm.Points) > 0 {
		t := Table{Caption: "Points, commit (committers)", Headline: true,
			Head: []string{"committers", "commits/s", "mean ms", "p99 ms", b.r.words.Log + " syncs/s", "server " + b.r.words.Log + " sync ms", "device write await ms", "CPU busy %", "limited by"}}
		for _, p := range cm.Points {
			mean, p99 := lat(p)
			row := cells(strconv.Itoa(p.Jobs), results.Num(p.CommitsPS), mean, p99, results.NumPtr(p.WALSyncsPS), results.NumPtr(p.ServerSyncMs), results.NumPtr(p.DiskWAwaitMs), results.NumPtr(p.CPUBusyPct), p.LimitedBy)
			row[8].Class = "t"
			t.Rows = append(t.Rows, row)
		}
		b.table(t)
	}
}

// withShares puts beside each point's figure (the table's second column)
// its share of what the run's device step did and the device point it is
// of, when any point has one (missing says why not, once).
func withShares(t Table, points []results.IOCalPoint) Table {
	if !slices.ContainsFunc(points, func(p results.IOCalPoint) bool { return p.DeviceSharePct != nil }) {
		return t
	}
	t.Head = slices.Insert(t.Head, 2, "of device %", "device point")
	for i, p := range points {
		of := p.DeviceShareOf
		if of == "" {
			of = "n/a"
		}
		t.Rows[i] = slices.Insert(t.Rows[i], 2, Cell{Text: results.NumPtr(p.DeviceSharePct)}, Cell{Text: of, Class: "t"})
	}
	return t
}

// iocalCard is the card of a calibration's headline point: its figure
// and its verdict, or n/a and none when no point qualified.
func (b *builder) iocalCard(name string, p *results.IOCalPoint, figure func(*results.IOCalPoint) float64, unit, note string) {
	if p == nil {
		b.card(name, "n/a", unit, note, "")
		return
	}
	b.card(name, results.Num(figure(p)), unit, note, p.LimitedBy)
}

// rampCard is the card of one load of a ramp: its figure and its
// verdict, or n/a and none when the ramp had no such load.
func (b *builder) rampCard(name string, s *results.RampStep, figure func(*results.RampStep) string, unit, note string) {
	if s == nil {
		b.card(name, "n/a", unit, note, "")
		return
	}
	b.card(name, figure(s), unit, note, s.LimitedBy)
}

// withWrites puts beside each write point's table MB/s (the second
// column) what the server wrote to its data files and its log (the
// engine's word), the log's full-page images and what the device wrote,
// with its share of the device step's sequential write, each column where
// any point has it.
func withWrites(t Table, points []results.IOCalPoint, log string) Table {
	cols := []struct {
		head string
		of   func(p results.IOCalPoint) *float64
	}{
		{"data files MB/s", func(p results.IOCalPoint) *float64 { return p.DataWMBPS }},
		{log + " MB/s", func(p results.IOCalPoint) *float64 { return p.WALMBPS }},
		{"full-page images/s", func(p results.IOCalPoint) *float64 { return p.WALFPIPS }},
		{"device wrote MB/s", func(p results.IOCalPoint) *float64 { return p.DiskWMBPS }},
		{"device wrote, of device %", func(p results.IOCalPoint) *float64 { return p.DiskWSharePct }},
	}
	at := 2
	for _, c := range cols {
		if !slices.ContainsFunc(points, func(p results.IOCalPoint) bool { return c.of(p) != nil }) {
			continue
		}
		t.Head = slices.Insert(t.Head, at, c.head)
		for i, p := range points {
			t.Rows[i] = slices.Insert(t.Rows[i], at, Cell{Text: results.NumPtr(c.of(p))})
		}
		at++
	}
	return t
}

func seqMax(s *results.IOCalSeq) string {
	if s == nil {
		return "n/a"
	}
	return results.Num(s.MaxMBPS)
}

func (b *builder) oltp(o *results.OLTP) {
	b.windowCard("NOPM", results.NumPtr(o.NOPM), "", "New-Orders per minute")
	b.windowCard("TPM (database)", results.NumPtr(o.TPMDB), "", "commits + rollbacks per minute")
	b.windowCard("ART", results.Num(o.ARTMs), "ms", "mean "+o.LatencyBasis+" time")
	keying := "keying/thinking off"
	if o.KeyingThinking != false {
		keying = fmt.Sprintf("keying/thinking ×%v", o.KeyingThinking)
	}
	mode := o.Mode + " mode"
	if o.Profile != "" {
		mode += ", profile " + o.Profile
	}
	b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("%s: %d warehouses, %d users, %s, %s, ramp-up %s s, timed window %s s, latency basis %s.",
		o.Workload, o.Warehouses, o.Users, mode, keying, results.Num(o.RampupS), results.Num(o.DurationS), o.LatencyBasis))
	eff := "n/a"
	if o.EfficiencyPct != nil {
		eff = results.Num(*o.EfficiencyPct) + " %"
	}
	b.table(Table{Caption: "Over the timed window", Headline: true,
		Head: []string{"NOPM", "TPM (db)", "TPM (client)", "ART ms", "New-Order commits", "efficiency"},
		Rows: [][]Cell{cells(results.NumPtr(o.NOPM), results.NumPtr(o.TPMDB), results.Num(o.TPMClient), results.Num(o.ARTMs), results.Int(o.NewOrderCommits), eff)}})

	if b.ts != nil && b.ts.Has("oltp_phase") {
		rows := b.window()
		x := b.seconds(rows)
		if len(rows) >= 2 {
			phase := pick(b.ts.Text("oltp_phase"), rows)
			ch := assets.Chart{XName: "seconds from the step's start", YName: "per minute", X: assets.Nums(x),
				Series: []assets.Series{{Name: "NOPM (client, each second)", Y: assets.Nums(pickF(b.ts.Float("oltp_nopm_client"), rows))},
					{Name: "TPM (client, each second)", Y: assets.Nums(pickF(b.ts.Float("oltp_tpm_client"), rows))}}}
			if from, to, ok := span(x, phase, "rampup"); ok {
				ch.Areas = []assets.Area{{Label: "ramp-up", From: from, To: to}}
			}
			lat := assets.Chart{XName: "seconds from the step's start", YName: "ms", X: assets.Nums(x), Areas: ch.Areas,
				Series: []assets.Series{{Name: "ART", Y: assets.Nums(pickF(b.ts.Float("oltp_art_ms"), rows))},
					{Name: "p90", Y: assets.Nums(pickF(b.ts.Float("oltp_p90_ms"), rows)), Dashed: true}}}
			b.charts("Over time (ramp-up shaded; the window's figures above come from counters at its edges)",
				b.chart("NOPM and TPM", ch), b.chart("Response time", lat))
		}
	}

	t := Table{Caption: "Per transaction, timed window (" + o.LatencyBasis + " time, ms)", Headline: true,
		Head: []string{"transaction", "count", "mix %", "mean", "p50", "p90", "p95", "p99", "max", "errors"}}
	var cats []string
	p50, p90, p99 := []float64{}, []float64{}, []float64{}
	for _, name := range txNames(o.Transactions) {
		s := o.Transactions[name]
		l := s.LatMs
		row := cells(name, results.Int(s.Count), results.Num(o.MixPct[name]), results.Num(l.Mean), results.Num(l.P50), results.Num(l.P90), results.Num(l.P95), results.Num(l.P99), results.Num(l.Max), results.Int(s.Errors))
		if s.Errors > 0 {
			row[9].Class = "bad"
		}
		t.Rows = append(t.Rows, row)
		cats = append(cats, name)
		p50, p90, p99 = append(p50, l.P50), append(p90, l.P90), append(p99, l.P99)
	}
	if len(cats) > 0 {
		b.charts("Latency percentiles", b.chart("Per transaction", assets.Chart{YName: "ms", Categories: cats, Series: []assets.Series{
			{Name: "p50", Type: "bar", Y: assets.Nums(p50)}, {Name: "p90", Type: "bar", Y: assets.Nums(p90)}, {Name: "p99", Type: "bar", Y: assets.Nums(p99)}}}))
	}
	b.table(t)
	if o.Driver != nil {
		b.sec.Notes = append(b.sec.Notes, driverNote(o.Driver))
	}
	if line := retried(o); line != "" {
		b.sec.Notes = append(b.sec.Notes, line)
	}
	b.consistency(o.Consistency)
	b.oltpValidity(o)
	b.oltpPartitions(o)
	b.oltpMembers(o)
	b.missing(o.Missing)
	b.sec.Notes = append(b.sec.Notes, o.Notes...)
}

// retried says how many of the window's attempts a session ran again
// itself (a Galera node's certification conflicts), by class; "" when none
// was.
func retried(o *results.OLTP) string {
	classes, n, attempts := o.Retried()
	if n == 0 {
		return ""
	}
	var parts []string
	for _, c := range classes {
		parts = append(parts, results.Int(c.Count)+" "+c.Class)
	}
	return fmt.Sprintf("Retries: %s, %s %% of %s attempts, ran again in their session. TPM (db) counts every attempt; TPM (client) and the latencies count each transaction once, its retries inside its time.",
		strings.Join(parts, ", "), results.Num(100*float64(n)/float64(attempts)), results.Int(attempts))
}

// oltpPartitions says which share of a split run this was, or, merged,
// what each partition drove.
func (b *builder) oltpPartitions(o *results.OLTP) {
	if p := o.Partition; p != nil {
		role := "the client side only; partition 1 read the database's counters"
		if p.Counters {
			role = "the database's counters for the whole run, and this partition's client side"
		}
		b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("Partition %d/%d of a split run of %d users (home warehouses %d of %d): it measured %s; 'calibra merge' combines the partitions.",
			p.Index, p.Of, p.UsersTotal, p.HomeWarehouses, o.Warehouses, role))
	}
	if len(o.Partitions) == 0 {
		return
	}
	t := Table{Caption: "Partitions (NOPM and TPM (db) were read by partition 1)", Headline: true,
		Head: []string{"partition", "host", "users", "home warehouses", "TPM (client)", "New-Order commits", "ART ms", "window s", "run directory"}}
	for _, p := range o.Partitions {
		row := cells(fmt.Sprintf("%d/%d", p.Index, p.Of), p.Host, results.Int(int64(p.Users)), results.Int(int64(p.HomeWarehouses)), results.Num(p.TPMClient),
			results.Int(p.NewOrderCommits), results.Num(p.ARTMs), results.Num(p.DurationS), p.Dir)
		row[1].Class, row[8].Class = "t", "t"
		t.Rows = append(t.Rows, row)
	}
	b.table(t)
}

// oltpMembers shows each server's share of a run on several.
func (b *builder) oltpMembers(o *results.OLTP) {
	if len(o.Instances) == 0 {
		return
	}
	t := Table{Caption: "Servers driven together (users dealt round-robin; NOPM and TPM (db) from each server's own counters)", Headline: true,
		Head: []string{"server", "users", "NOPM", "TPM (db)", "TPM (client)", "ART ms"}}
	if b.r.clusterNodes > 0 {
		t.Caption = fmt.Sprintf("Nodes of the %s, one database replicated on all %d (users dealt round-robin; TPM (db) from each node's own counters; NOPM is the database's, counted once)", b.r.words.Cluster, b.r.clusterNodes)
		t.Head[0] = "node"
	}
	for _, m := range o.Instances {
		t.Rows = append(t.Rows, cells(results.Int(int64(m.Instance)), results.Int(int64(m.Users)), results.NumPtr(m.NOPM), results.NumPtr(m.TPMDB), results.Num(m.TPMClient), results.Num(m.ARTMs)))
	}
	b.table(t)
}

// oltpValidity shows the mix and input checks, the skipped deliveries, the
// window's checkpoints and the step's warnings.
func (b *builder) oltpValidity(o *results.OLTP) {
	if len(o.Checks) > 0 {
		t := Table{Caption: "Validity: ok (mix minimums 5.2.3, input bands 9.2.2.5)", Headline: true,
			Head: []string{"check", "clause", "measured %", "count", "of", "specification", "judged at %", "verdict"}}
		if o.Valid != nil && !*o.Valid {
			t.Caption = "Validity: INVALID (" + strings.Join(o.InvalidReasons, "; ") + ")"
		}
		for _, c := range o.Checks {
			judged := "≥ " + results.Num(c.LowPct)
			if c.HighPct > 0 {
				judged = results.Num(c.LowPct) + " – " + results.Num(c.HighPct)
			}
			row := cells(c.Name, c.Clause, results.Num(c.Pct), results.Int(c.Count), results.Int(c.Of), c.Target, judged)
			row[0].Class, row[5].Class = "t", "t"
			word := "ok"
			if c.Note != "" {
				word = c.Note
			}
			t.Rows = append(t.Rows, append(row, verdictCell(c.OK, word, "outside")))
		}
		b.table(t)
	}
	if d := o.Delivery; d != nil {
		b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("Deliveries: %d of %d districts skipped (%s %%; clause 2.7.4.2 flags more than 1 %%).",
			d.SkippedDistricts, d.Deliveries*10, results.Num(d.SkippedPct)))
	}
	if o.CheckpointsInWindow != nil {
		b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("%s: %d.", b.r.words.Checkpoints, *o.CheckpointsInWindow))
	}
	for _, w := range o.Warnings {
		b.sec.Notes = append(b.sec.Notes, "Warning: "+w+".")
	}
}

// txNames lists the spec's transactions first, then any others.
func txNames(m map[string]results.TxStats) []string {
	var out []string
	for _, n := range results.TxTypes {
		if _, ok := m[n]; ok {
			out = append(out, n)
		}
	}
	var rest []string
	for n := range m {
		if !slices.Contains(results.TxTypes, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func (b *builder) consistency(c *results.Consistency) {
	if c == nil {
		return
	}
	t := Table{Caption: "Consistency", Head: []string{"check", "name", "verdict", "violations", "detail"}, Headline: true}
	for _, ch := range c.Checks {
		row := cells(ch.ID, ch.Name)
		row[1].Class = "t"
		row = append(row, verdictCell(ch.OK, "ok", "FAILED"), Cell{Text: results.Int(ch.Violations)}, Cell{Text: ch.Detail, Class: "t"})
		t.Rows = append(t.Rows, row)
	}
	if c.OK {
		t.Caption = "Consistency: ok"
	} else {
		t.Caption = "Consistency: FAILED"
	}
	b.table(t)
}

func (b *builder) oltpBuild(o *results.OLTPBuild) {
	b.table(Table{Caption: "Build", Head: []string{"warehouses", "MB", "load s", "index s", "vacuum s", "total s", "MB/s"},
		Rows: [][]Cell{cells(strconv.Itoa(o.Warehouses), results.Num(float64(o.DBBytes)/1e6), results.Num(o.LoadS), results.Num(o.IndexS), results.Num(o.VacuumS), results.Num(o.TotalS), results.Num(o.MBPerS))}})
	b.consistency(o.Consistency)
}

func (b *builder) ramp(r *results.Ramp) {
	b.rampCard("max TPS", r.MaxStep(), func(s *results.RampStep) string { return results.Num(s.TPS) }, "TPS", "over the ramp")
	users := r.UsersWithinSLA()
	unit := "users"
	if r.SLAReached != nil && !*r.SLAReached {
		unit = "" // "≥ 8 (SLA not reached)" says it
	}
	b.rampCard("users within SLA", r.StepAt(r.MaxUsersWithinSLA), func(*results.RampStep) string { return users }, unit, fmt.Sprintf("%s ≤ %s ms", r.SLAMetric, results.Num(r.SLAMs)))
	if r.ARTAtUsers != nil {
		b.rampCard(fmt.Sprintf("ART at %d users", *r.ARTAtUsers), r.StepAt(r.ARTAtUsers), func(s *results.RampStep) string { return results.Num(s.ARTMs) }, "ms", "")
	}
	var x, tps, art, p90, nopm, busy, iowait, await, dfr, wal []float64
	t := Table{Caption: fmt.Sprintf("Steps (%s loop, %s time; SLA: %s ≤ %s ms)", r.Loop, r.LatencyBasis, r.SLAMetric, results.Num(r.SLAMs)), Headline: true,
		Head: []string{"users", "TPS", "NOPM", "ART ms", "p90 ms", "CPU busy %", "I/O wait %", "disk await ms", "data-file read ms", b.r.words.Log + " sync ms", "Little's users", "within SLA", "errors", "limited by"}}
	for _, s := range r.Steps {
		x, tps, art, p90 = append(x, float64(s.Users)), append(tps, s.TPS), append(art, s.ARTMs), append(p90, s.P90Ms)
		nopm, busy, iowait = append(nopm, ptrOr(s.NOPM)), append(busy, ptrOr(s.CPUBusyPct)), append(iowait, ptrOr(s.IOWaitPct))
		await, dfr, wal = append(await, ptrOr(s.DiskAwaitMs)), append(dfr, ptrOr(s.DataFileReadAvgMs)), append(wal, ptrOr(s.WALSyncAvgMs))
		row := cells(results.Int(int64(s.Users)), results.Num(s.TPS), results.NumPtr(s.NOPM), results.Num(s.ARTMs), results.Num(s.P90Ms), results.NumPtr(s.CPUBusyPct), results.NumPtr(s.IOWaitPct),
			results.NumPtr(s.DiskAwaitMs), results.NumPtr(s.DataFileReadAvgMs), results.NumPtr(s.WALSyncAvgMs), results.NumPtr(s.LittleUsers))
		t.Rows = append(t.Rows, append(row, verdictCell(s.WithinSLA, "yes", "no"), Cell{Text: results.Int(s.Errors)}, Cell{Text: s.LimitedBy, Class: "t"}))
	}
	ch := assets.Chart{XName: "users", YName: "TPS", Y2Name: "ms", X: assets.Nums(x),
		Series: []assets.Series{{Name: "TPS", Y: assets.Nums(tps)}, {Name: "ART ms", Y: assets.Nums(art), Y2: true, Dashed: true},
			{Name: "p90 ms", Y: assets.Nums(p90), Y2: true, Dashed: true}},
		MarkY: []assets.Mark{{Label: "SLA " + results.Num(r.SLAMs) + " ms", Value: r.SLAMs, Y2: true}}}
	if r.MaxUsersWithinSLA != nil {
		ch.MarkX = []assets.Mark{{Label: fmt.Sprintf("max users %d", *r.MaxUsersWithinSLA), Value: float64(*r.MaxUsersWithinSLA)}}
	}
	// The SLA line is always drawn: the axis reaches it (calibra.js).
	b.charts("Against users", b.chart("TPS and response time (SLA "+results.Num(r.SLAMs)+" ms)", ch),
		b.chart("NOPM and TPS", assets.Chart{XName: "users", YName: "NOPM", Y2Name: "TPS", X: assets.Nums(x),
			Series: []assets.Series{{Name: "NOPM", Y: assets.Nums(nopm)}, {Name: "TPS", Y: assets.Nums(tps), Y2: true, Dashed: true}}}),
		b.chart("CPU busy and I/O wait", assets.Chart{XName: "users", YName: "% of all CPUs", X: assets.Nums(x),
			Series: []assets.Series{{Name: "CPU busy %", Y: assets.Nums(busy)}, {Name: "I/O wait %", Y: assets.Nums(iowait), Dashed: true}}}),
		b.chart("Storage and database latency", assets.Chart{XName: "users", YName: "ms", X: assets.Nums(x),
			Series: []assets.Series{{Name: "disk await ms", Y: assets.Nums(await)}, {Name: "data-file read ms", Y: assets.Nums(dfr)},
				{Name: b.r.words.Log + " sync ms", Y: assets.Nums(wal), Dashed: true}}}))
	b.table(Table{Caption: "Ramp to the SLA", Headline: true, Head: []string{"max TPS", "max users within SLA", "ART at users", "stop reason"},
		Rows: [][]Cell{cells(results.NumPtr(r.MaxTPS), users, artAt(r), r.StopReasonText())}})
	b.table(t)
	b.missing(r.Missing)
	b.sec.Notes = append(b.sec.Notes, r.Notes...)
}

// scale draws a load's figures against the servers that carried it, as
// study 000 draws NOPM against RAC nodes and 004 latency against nodes.
func (b *builder) scale(sc *results.Scale) {
	value, by := "n/a", ""
	if p := sc.MaxPoint(); p != nil {
		value, by = results.NumPtr(p.NOPM), p.LimitedBy
	}
	b.card("max NOPM", value, "", "over the points", by)
	var x, nopm, tpm, art, p90, busy, await, dfr, wal []float64
	t := Table{Caption: fmt.Sprintf("Points (%d users in all, dealt round-robin; %d warehouses on each server; %s time)", sc.Users, sc.Warehouses, sc.LatencyBasis), Headline: true,
		Head: []string{"servers", "NOPM", "TPM (db)", "TPM (client)", "ART ms", "p90 ms", "CPU busy %", "I/O wait %", "disk await ms", "data-file read ms", b.r.words.Log + " sync ms", "errors", "limited by"}}
	for _, p := range sc.Points {
		x, nopm, tpm = append(x, float64(p.Servers)), append(nopm, ptrOr(p.NOPM)), append(tpm, ptrOr(p.TPMDB))
		art, p90, busy = append(art, p.ARTMs), append(p90, p.P90Ms), append(busy, ptrOr(p.CPUBusyPct))
		await, dfr, wal = append(await, ptrOr(p.DiskAwaitMs)), append(dfr, ptrOr(p.DataFileReadAvgMs)), append(wal, ptrOr(p.WALSyncAvgMs))
		t.Rows = append(t.Rows, append(cells(results.Int(int64(p.Servers)), results.NumPtr(p.NOPM), results.NumPtr(p.TPMDB), results.Num(p.TPMClient), results.Num(p.ARTMs), results.Num(p.P90Ms),
			results.NumPtr(p.CPUBusyPct), results.NumPtr(p.IOWaitPct), results.NumPtr(p.DiskAwaitMs), results.NumPtr(p.DataFileReadAvgMs), results.NumPtr(p.WALSyncAvgMs), results.Int(p.Errors)),
			Cell{Text: p.LimitedBy, Class: "t"}))
	}
	b.charts("Against servers", b.chart("NOPM and TPM (db)", assets.Chart{XName: "servers", YName: "NOPM", Y2Name: "TPM", X: assets.Nums(x),
		Series: []assets.Series{{Name: "NOPM", Y: assets.Nums(nopm)}, {Name: "TPM (db)", Y: assets.Nums(tpm), Y2: true, Dashed: true}}}),
		b.chart("Response time", assets.Chart{XName: "servers", YName: "ms", X: assets.Nums(x),
			Series: []assets.Series{{Name: "ART ms", Y: assets.Nums(art)}, {Name: "p90 ms", Y: assets.Nums(p90), Dashed: true}}}),
		b.chart("Storage and database latency", assets.Chart{XName: "servers", YName: "ms", X: assets.Nums(x),
			Series: []assets.Series{{Name: "disk await ms", Y: assets.Nums(await)}, {Name: "data-file read ms", Y: assets.Nums(dfr)},
				{Name: b.r.words.Log + " sync ms", Y: assets.Nums(wal), Dashed: true}}}),
		b.chart("CPU busy", assets.Chart{XName: "servers", YName: "% of all CPUs", X: assets.Nums(x),
			Series: []assets.Series{{Name: "CPU busy %", Y: assets.Nums(busy)}}}))
	b.table(t)
	b.sec.Notes = append(b.sec.Notes, sc.Workload+": each point is a timed window of its own; NOPM and TPM (db) are the servers' sums, each read from its own counters. The instances share no data, unlike RAC nodes.")
	b.missing(sc.Missing)
	b.sec.Notes = append(b.sec.Notes, sc.Notes...)
}

func artAt(r *results.Ramp) string {
	if r.ARTAtUsers == nil {
		return "n/a"
	}
	return fmt.Sprintf("%s ms at %d", results.NumPtr(r.ARTAtMs), *r.ARTAtUsers)
}

func (b *builder) dssBuild(d *results.DSSBuild) {
	b.table(Table{Caption: "Build (scale factor " + results.Num(d.ScaleFactor) + ", " + d.Generator + ")", Head: []string{"MB", "load s", "index s", "analyze s", "total s", "MB/s"},
		Rows: [][]Cell{cells(results.Num(float64(d.DBBytes)/1e6), results.Num(d.LoadS), results.Num(d.IndexS), results.Num(d.AnalyzeS), results.Num(d.TotalS), results.Num(d.MBPerS))}})
}

func (b *builder) dss(d *results.DSS) {
	b.sec.Notes = append(b.sec.Notes, d.Workload+", scale factor "+results.Num(d.ScaleFactor)+": TPC-H-derived, not comparable with published TPC-H results.")
	head := Table{Caption: "Headline", Headline: true, Head: []string{"geomean s", "Power@Size", "Throughput@Size", "streams", "QphH"}}
	geo, power, thr, streams := "n/a", "n/a", "n/a", "n/a"
	if d.Power != nil {
		geo, power = results.NumPtr(d.Power.GeomeanS), results.NumPtr(d.Power.PowerAtSize)
		b.windowCard("DSS geomean", geo, "s", "power test, per query")
	}
	if d.Throughput != nil {
		thr, streams = results.NumPtr(d.Throughput.ThroughputAtSize), strconv.Itoa(d.Throughput.Streams)
	}
	qphh, sub := "QphH (derived)", "TPC-H-derived"
	if d.Valid != nil { // a run that applied clause 5.3.7.5
		sub += ", times rounded to 0.1 s"
	}
	if d.Valid != nil && !*d.Valid {
		qphh = "QphH (indicative)"
		head.Head[len(head.Head)-1] = qphh
		for _, why := range d.InvalidReasons {
			b.sec.Notes = append(b.sec.Notes, "Indicative, not a result the specification defines: "+why+".")
		}
	}
	b.windowCard(qphh, results.NumPtr(d.QphH), "", sub)
	head.Rows = [][]Cell{cells(geo, power, thr, streams, results.NumPtr(d.QphH))}
	b.table(head)

	var refs []ChartRef
	if d.Power != nil && len(d.Power.Queries) > 0 {
		var cats []string
		var secs []float64
		t := Table{Caption: "Power test queries", Headline: true, Head: []string{"query", "seconds", "rows", "note"}}
		// In query order, Q1 to Q22 then the refreshes, whatever order the
		// stream ran them in.
		queries := slices.Clone(d.Power.Queries)
		slices.SortStableFunc(queries, func(a, b results.DSSQuery) int { return queryNumber(a.Q) - queryNumber(b.Q) })
		for _, q := range append(queries, d.Power.Refresh...) {
			cats = append(cats, qname(q.Q))
			secs = append(secs, ptrOr(q.Seconds))
			t.Rows = append(t.Rows, cells(qname(q.Q), results.NumPtr(q.Seconds), results.Int(q.Rows), queryNote(q)))
			t.Rows[len(t.Rows)-1][3].Class = "t"
		}
		refs = append(refs, b.chart("Per-query seconds (power test)", assets.Chart{YName: "seconds", Categories: cats,
			Series: []assets.Series{{Name: "seconds", Type: "bar", Y: assets.Nums(secs)}}}))
		defer b.table(t)
	}
	if d.Throughput != nil && len(d.Throughput.StreamRuns) > 0 {
		refs = append(refs, b.chart("Throughput test streams (each bar a query: hover for its name and seconds; the refresh row runs RF1 and RF2)", streamsTimeline(d.Throughput)))
	}
	if b.ts != nil && b.ts.Has("disk_r_mbps") {
		rows := b.window()
		if len(rows) >= 2 {
			refs = append(refs, b.chart("Storage MB/s over the test", assets.Chart{XName: "seconds from the step's start", YName: "MB/s",
				X: assets.Nums(b.seconds(rows)), Series: []assets.Series{
					{Name: "read MB/s", Y: assets.Nums(pickF(b.ts.Float("disk_r_mbps"), rows))},
					{Name: "write MB/s", Y: assets.Nums(pickF(b.ts.Float("disk_w_mbps"), rows))}}}))
		}
	}
	if len(refs) > 0 {
		b.charts("Queries", refs...)
	}
	b.missing(d.Missing)
	b.sec.Notes = append(b.sec.Notes, d.Notes...)
}

// streamsTimeline draws the throughput test's streams and refreshes, each
// query a bar over its time.
func streamsTimeline(t *results.DSSThroughput) assets.Chart {
	tl := assets.Chart{Kind: "timeline", XName: "seconds from the test's start"}
	for _, s := range t.StreamRuns {
		row := fmt.Sprintf("stream %d", s.Stream)
		tl.Rows = append(tl.Rows, row)
		for _, q := range s.Queries {
			if q.Seconds != nil {
				tl.Segments = append(tl.Segments, assets.Segment{Row: row, From: q.StartS, To: q.StartS + *q.Seconds, Label: qname(q.Q)})
			}
		}
	}
	if len(t.Refresh) > 0 {
		tl.Rows = append(tl.Rows, "refresh")
		for _, q := range t.Refresh {
			if q.Seconds != nil {
				tl.Segments = append(tl.Segments, assets.Segment{Row: "refresh", From: q.StartS, To: q.StartS + *q.Seconds, Label: q.Q})
			}
		}
	}
	return tl
}

// queryNumber orders queries by their number ("9" before "10").
func queryNumber(q string) int {
	n, err := strconv.Atoi(q)
	if err != nil {
		return math.MaxInt
	}
	return n
}

func qname(q string) string {
	if strings.HasPrefix(q, "RF") {
		return q
	}
	return "Q" + q
}

func queryNote(q results.DSSQuery) string {
	switch {
	case q.TimedOut:
		return "timed out"
	case q.Error != "":
		return q.Error
	}
	return ""
}

func ptrOr(v *float64) float64 {
	if v == nil {
		return nan
	}
	return *v
}

// driverNote is the load generator's own cost: its CPU a transaction and,
// on the polling driver, the polling threads' part and a wake-up's.
func driverNote(d *results.DriverCPU) string {
	polling := ""
	if d.PollingCPUUsPerTxn > 0 {
		polling = fmt.Sprintf("; the polling threads themselves %s µs", results.Num(d.PollingCPUUsPerTxn))
	}
	if d.TxnPerWakeup > 0 {
		polling += fmt.Sprintf("; %s transactions and %s µs of the polling threads' CPU a wake-up", results.Num(d.TxnPerWakeup), results.Num(d.PollingCPUUsPerWakeup))
	}
	return fmt.Sprintf("Driver CPU: %s s (%s µs per transaction%s, %s %% of the machine).",
		results.Num(d.CPUS), results.Num(d.CPUUsPerTxn), polling, results.Num(d.MachineSharePct))
}
