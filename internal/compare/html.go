package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

//go:embed compare.tmpl
var compareTmpl string

var page = template.Must(assets.Template(nil).Parse(compareTmpl))

type cell struct{ Text, Class string }

type chartRef struct{ ID, Title string }

// stepGroup is a step's rows in the page.
type stepGroup struct {
	Title string
	Rows  [][]cell
}

// barBlock is one run's headline against the base.
type barBlock struct {
	Head string
	Bars []htmlBar
}

// htmlBar is a change drawn as a CSS bar: Left and Width are percent of
// the bar's box, whose middle is zero.
type htmlBar struct {
	Title, Pct, Verdict, Class string
	Left, Width                float64
}

// verdictClass colours a verdict: green or red only for a tested better or
// worse, grey for everything else (a single run's value among them).
func verdictClass(v string) string {
	switch v {
	case "better":
		return "good"
	case "worse":
		return "bad"
	}
	return "nv"
}

// HTML writes a self-contained page: the headline's bars, the runs' curves
// overlaid (ramps, iocal sweeps, device curves, query times), then the
// table grouped by step.
func HTML(w io.Writer, t *Table, runs []Run) error {
	specs, refs := overlays(runs)
	a, err := assets.NewPage(specs)
	if err != nil {
		return err
	}
	row := func(texts []string, classes ...string) []cell {
		out := make([]cell, len(texts))
		for i, s := range texts {
			out[i] = cell{Text: s}
		}
		out[0].Class = "t"
		for i, c := range classes {
			out[2+2*i].Class = c
		}
		return out
	}
	var groups []stepGroup
	t.groups(func(s StepInfo, rows []Row) {
		g := stepGroup{Title: s.groupTitle()}
		if c := t.limitCells(s); c != nil {
			g.Rows = append(g.Rows, row(c))
		}
		for _, r := range rows {
			var classes []string
			for i := 1; i < len(r.Values); i++ {
				classes = append(classes, "")
				if d := r.Deltas[i]; d != nil && d.mark() != "" {
					classes[i-1] = verdictClass(d.Verdict)
				}
			}
			g.Rows = append(g.Rows, row(t.cellsOf(r), classes...))
		}
		groups = append(groups, g)
	})
	var blocks []barBlock
	for i := 1; i < len(t.Runs) && len(t.Summary) > 0; i++ {
		b := barBlock{Head: t.summaryHead(i)}
		scale := t.barScale(i)
		for _, s := range t.Summary {
			if s.Verdict[i] == "" {
				continue
			}
			hb := htmlBar{Title: s.Title + " " + arrow(s.Better), Pct: pctText(s.Pct[i]), Verdict: s.verdictText(i), Class: verdictClass(s.Verdict[i]), Left: 50}
			if p := s.Pct[i]; p != nil {
				hb.Width = math.Min(math.Abs(*p)/scale, 1) * 50
				if *p < 0 {
					hb.Left = 50 - hb.Width
				}
			}
			b.Bars = append(b.Bars, hb)
		}
		blocks = append(blocks, b)
	}
	return assets.Execute(w, page, struct {
		T       *Table
		Assets  assets.Page
		Charts  []chartRef
		Head    []string
		Groups  []stepGroup
		Summary []barBlock
		Legend  string
	}{t, a, refs, t.header(), groups, blocks, legend})
}

// overlays draws each kind's curves with one series per run, from the
// first step of that kind in each run.
// The captions are HTML text beside the charts.
func overlays(runs []Run) ([]assets.Chart, []chartRef) {
	var o overlay
	for _, draw := range []func([]Run){o.ramps, o.iocal, o.devices, o.dssQueries, o.oltpP90, o.servers} {
		draw(runs)
	}
	return o.charts, o.refs
}

// overlay is the charts that overlay runs, and their captions.
type overlay struct {
	charts []assets.Chart
	refs   []chartRef
}

// add adds c when it has two series or more: something to overlay.
func (o *overlay) add(id, title string, c assets.Chart) {
	if len(c.Series) < 2 {
		return
	}
	c.ID = id
	o.charts = append(o.charts, c)
	o.refs = append(o.refs, chartRef{ID: id, Title: title})
}

// first is the body of the run's first step of kind; nil when it has none.
func first(r Run, kind string) any {
	st, _ := firstStep(r, kind)
	return st.Body
}

// ramps: throughput, response time and the host's CPU busy and I/O wait
// against users (002 Figs 6-7): what bent each run's curve.
func (o *overlay) ramps(runs []Run) {
	tps := assets.Chart{XName: "users", YName: "TPS"}
	art := assets.Chart{XName: "users", YName: "ART ms"}
	cpu := assets.Chart{XName: "users", YName: "% of all CPUs"}
	for _, r := range runs {
		b, ok := first(r, results.KindRamp).(*results.Ramp)
		if !ok {
			continue
		}
		var x, y, z []float64
		var busy, wait []assets.Num
		for _, s := range b.Steps {
			x, y, z = append(x, float64(s.Users)), append(y, s.TPS), append(z, s.ARTMs)
			busy, wait = append(busy, assets.Ptr(s.CPUBusyPct)), append(wait, assets.Ptr(s.IOWaitPct))
		}
		tps.Series = append(tps.Series, assets.Series{Name: r.Label, X: assets.Nums(x), Y: assets.Nums(y)})
		art.Series = append(art.Series, assets.Series{Name: r.Label, X: assets.Nums(x), Y: assets.Nums(z)})
		cpu.Series = append(cpu.Series, assets.Series{Name: r.Label + " CPU busy", X: assets.Nums(x), Y: busy},
			assets.Series{Name: r.Label + " I/O wait", X: assets.Nums(x), Y: wait, Dashed: true})
		if len(art.MarkY) == 0 {
			art.MarkY = []assets.Mark{{Label: fmt.Sprintf("SLA %g ms", b.SLAMs), Value: b.SLAMs}}
		}
	}
	o.add("ramp-tps", "Ramp: TPS against users", tps)
	o.add("ramp-art", "Ramp: ART against users", art)
	if len(cpu.Series) >= 4 { // two runs, each a pair
		o.add("ramp-cpu", "Ramp: CPU busy (solid) and I/O wait (dashed) against users", cpu)
	}
}

// iocal: random IOPS and sequential MB/s against jobs.
func (o *overlay) iocal(runs []Run) {
	iops := assets.Chart{XName: "parallel jobs", YName: "IOPS", XLog: true}
	seq := assets.Chart{XName: "parallel jobs", YName: "MB/s", XLog: true}
	for _, r := range runs {
		b, ok := first(r, results.KindIOCal).(*results.IOCal)
		if !ok {
			continue
		}
		if b.RandomRead != nil {
			x, y := points(b.RandomRead.Points, func(p results.IOCalPoint) float64 { return p.IOPS })
			iops.Series = append(iops.Series, assets.Series{Name: r.Label, X: x, Y: y})
		}
		for _, s := range []struct {
			name string
			sw   *results.IOCalSeq
		}{{"read", b.SeqRead}, {"write", b.SeqWrite}} {
			if s.sw != nil {
				x, y := points(s.sw.Points, func(p results.IOCalPoint) float64 { return p.MBPS })
				seq.Series = append(seq.Series, assets.Series{Name: r.Label + " " + s.name, X: x, Y: y, Dashed: s.name == "write"})
			}
		}
	}
	o.add("iocal-iops", "iocal: random read IOPS against jobs", iops)
	o.add("iocal-seq", "iocal: sequential MB/s against jobs", seq)
}

// devices: IOPS and p99 against queue depth, per spec.
func (o *overlay) devices(runs []Run) {
	dev := map[string]*[2]assets.Chart{}
	var specs []string
	for _, r := range runs {
		b, ok := first(r, results.KindDevice).(*results.Device)
		if !ok {
			continue
		}
		by := map[string][]results.DevicePoint{}
		var order []string
		for _, p := range b.Points {
			if _, ok := by[p.Spec]; !ok {
				order = append(order, p.Spec)
			}
			by[p.Spec] = append(by[p.Spec], p)
		}
		for _, s := range order {
			c, ok := dev[s]
			if !ok {
				c = &[2]assets.Chart{{XName: "queue depth per worker", YName: "IOPS", XLog: true}, {XName: "queue depth per worker", YName: "p99 µs", XLog: true}}
				dev[s] = c
				specs = append(specs, s)
			}
			var x, y, l []float64
			for _, p := range by[s] {
				x, y = append(x, float64(p.QD)), append(y, p.IOPS)
				if p.LatUs != nil {
					l = append(l, p.LatUs.P99)
				} else {
					l = append(l, nan)
				}
			}
			c[0].Series = append(c[0].Series, assets.Series{Name: r.Label, X: assets.Nums(x), Y: assets.Nums(y)})
			c[1].Series = append(c[1].Series, assets.Series{Name: r.Label, X: assets.Nums(x), Y: assets.Nums(l)})
		}
	}
	for i, s := range specs {
		o.add(fmt.Sprintf("dev-%d-iops", i), "Device "+s+": IOPS against queue depth", dev[s][0])
		o.add(fmt.Sprintf("dev-%d-p99", i), "Device "+s+": p99 latency against queue depth", dev[s][1])
	}
}

// dssQueries: power-test query times side by side.
func (o *overlay) dssQueries(runs []Run) {
	q := assets.Chart{YName: "seconds"}
	for _, r := range runs {
		b, ok := first(r, results.KindDSS).(*results.DSS)
		if !ok || b.Power == nil {
			continue
		}
		var y []float64
		var cats []string
		for _, qq := range b.Power.Queries {
			cats = append(cats, "Q"+qq.Q)
			if qq.Seconds != nil {
				y = append(y, *qq.Seconds)
			} else {
				y = append(y, nan)
			}
		}
		if q.Categories == nil {
			q.Categories = cats
		}
		if strings.Join(cats, ",") == strings.Join(q.Categories, ",") {
			q.Series = append(q.Series, assets.Series{Name: r.Label, Type: "bar", Y: assets.Nums(y)})
		}
	}
	o.add("dss-queries", "DSS: power test query seconds", q)
}

// oltpP90: per-transaction p90 side by side.
func (o *overlay) oltpP90(runs []Run) {
	tx := assets.Chart{YName: "p90 ms", Categories: results.TxTypes}
	for _, r := range runs {
		b, ok := first(r, results.KindOLTP).(*results.OLTP)
		if !ok {
			continue
		}
		var y []float64
		for _, n := range results.TxTypes {
			if s, ok := b.Transactions[n]; ok && s.Count > 0 {
				y = append(y, s.LatMs.P90)
			} else {
				y = append(y, nan)
			}
		}
		tx.Series = append(tx.Series, assets.Series{Name: r.Label, Type: "bar", Y: assets.Nums(y)})
	}
	o.add("oltp-p90", "OLTP: p90 per transaction", tx)
}

// servers driven together (--instances): NOPM and TPM, then ART and the
// data device's read and overall await, against their number, as study
// 000 draws NOPM against RAC nodes and 004 latency against nodes.
func (o *overlay) servers(runs []Run) {
	var n, nopm, tpm, artMs, rAwait, await []assets.Num
	seen := map[int]bool{}
	for _, r := range runs {
		st, ok := firstStep(r, results.KindOLTP)
		if !ok {
			continue
		}
		b := st.Body.(*results.OLTP)
		k := servers(r)
		seen[k] = true
		n = append(n, assets.Num(k))
		nopm, tpm, artMs = append(nopm, assets.Ptr(b.NOPM)), append(tpm, assets.Ptr(b.TPMDB)), append(artMs, assets.Num(b.ARTMs))
		var ra, a *float64
		if st.Observe != nil && st.Observe.Disk != nil {
			ra, a = st.Observe.Disk.RAwaitMs, st.Observe.Disk.AwaitMs
		}
		rAwait, await = append(rAwait, assets.Ptr(ra)), append(await, assets.Ptr(a))
	}
	if len(seen) > 1 {
		o.add("servers-rate", "OLTP: NOPM and TPM (db) against the servers driven together",
			assets.Chart{XName: "servers", YName: "per minute", Series: []assets.Series{
				{Name: "NOPM", X: n, Y: nopm}, {Name: "TPM (db)", X: n, Y: tpm, Dashed: true}}})
		o.add("servers-latency", "OLTP: ART and the data device's await against the servers driven together",
			assets.Chart{XName: "servers", YName: "ms", Series: []assets.Series{
				{Name: "ART", X: n, Y: artMs}, {Name: "device read await", X: n, Y: rAwait, Dashed: true},
				{Name: "device await", X: n, Y: await, Dashed: true}}})
	}
}

// firstStep is the run's first step of kind.
func firstStep(r Run, kind string) (results.Step, bool) {
	for _, st := range r.Steps {
		if st.Kind == kind {
			return st, true
		}
	}
	return results.Step{}, false
}

// servers counts the servers a run drove together: its instances or its
// Galera nodes, else one.
func servers(r Run) int {
	if e := r.Meta.Engine; e != nil && max(e.Instances, e.ClusterNodes) > 1 {
		return max(e.Instances, e.ClusterNodes)
	}
	return 1
}

func points(ps []results.IOCalPoint, f func(results.IOCalPoint) float64) ([]assets.Num, []assets.Num) {
	var x, y []float64
	for _, p := range ps {
		x, y = append(x, float64(p.Jobs)), append(y, f(p))
	}
	return assets.Nums(x), assets.Nums(y)
}

// StyleHashes allow the page's inline styles in a Content-Security-Policy
// (assets.Hash): the skeleton's and the page's own, which has no action.
func StyleHashes() []string {
	_, rest, _ := strings.Cut(compareTmpl, "<style>")
	own, _, _ := strings.Cut(rest, "</style>")
	return append(slices.Clone(assets.StyleHashes), assets.Hash(own))
}
