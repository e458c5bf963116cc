// Package report renders a run directory's results.json (and
// timeseries.csv, when present) as report.html, one self-contained page
// that works offline, and report.md, the headline tables for tickets. It
// reads only those files: no metric is computed twice.
package report

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

// Report is a run laid out for reading: headline cards, then one section
// per step in layer order, then the environment and the definitions.
type Report struct {
	Title    string
	Label    string
	Command  string
	Status   string
	Error    string
	Started  string
	Finished string
	Duration string
	Cards    []Card
	// Warnings are the run's caveats, each said once, with what to do;
	// Verdicts and Repeats are the study's thresholds and repeat medians.
	Warnings []string
	Verdicts *Table
	Repeats  *Table
	// BaselineNote is the run's verdict against its baseline of stored
	// runs (--baseline) in a sentence, "" without one; Baseline its
	// figures, nil without any.
	BaselineNote string
	Baseline     *Table
	Sections     []Section
	Env          []Table
	Defs         []Def

	charts        []assets.Chart
	points        int  // the charts' numbers, for the size bound
	steps         int  // the run's steps, for the size bound's sentence
	tooBig        bool // laid out only in part: past MaxBytes
	hasTimeseries bool
	// words are the measured engine's terms (neutral ones for a run of
	// none, or of an engine that gives none), clusterNodes its cluster's
	// nodes (0: none).
	words        terms.Words
	clusterNodes int
}

// Card is one headline figure.
type Card struct {
	Name  string
	Value string
	Unit  string
	Note  string
	// LimitedBy is what limited the figure: its point's verdict, or the
	// step's for a figure of the step's whole window.
	LimitedBy string
}

// Section is one step's figures.
type Section struct {
	ID     string
	Title  string
	Kind   string
	Status string // the step's status when it is not "complete"
	Error  string
	// LimitedBy is what limited the step, and the rule that said so.
	LimitedBy, LimitedByRule string
	Notes                    []string
	Blocks                   []Block
}

// Block is a chart, a row of charts or a table, in reading order.
type Block struct {
	Heading string
	Charts  []ChartRef
	Table   *Table
	Note    string
}

// ChartRef places a chart; its data travels in the page's JSON.
type ChartRef struct {
	ID    string
	Title string
}

// Table is a table of text cells. Headline tables also go into report.md.
type Table struct {
	Caption  string
	Head     []string
	Rows     [][]Cell
	Headline bool
}

// Cell is one table cell; Class marks a verdict ("good", "bad") or text
// ("t", left-aligned).
type Cell struct {
	Text  string
	Class string
}

// Def is a metric definition.
type Def struct{ Term, Text string }

// layerRank orders steps by layer; unknown kinds go last, listed.
var layerRank = map[string]int{
	results.KindDevice: 1, results.KindIOCal: 2, results.KindOLTPBuild: 3, results.KindOLTP: 4,
	results.KindOLTPCheck: 5, results.KindRamp: 6, results.KindScale: 6, results.KindDSSBuild: 7, results.KindDSS: 8,
}

// Build lays out a run. ts may be nil (no timeseries.csv): the time charts
// are then left out with a note.
func Build(run *results.Run, ts *results.Timeseries) *Report {
	r := &Report{Label: run.Meta.Label, Command: run.Meta.Command, Status: run.Status, Error: run.Error,
		Started: run.StartedAt.UTC().Format(time.RFC3339), hasTimeseries: ts != nil}
	r.words = terms.Neutral
	if e := run.Meta.Engine; e != nil {
		r.words, r.clusterNodes = terms.Of(e.Name), e.ClusterNodes
	}
	if r.Error == r.Status {
		r.Error = "" // "interrupted" says nothing the status does not
	}
	r.Title = "calibra " + run.Meta.Command
	if r.Label != "" {
		r.Title += ": " + r.Label
	}
	if run.FinishedAt != nil {
		r.Finished = run.FinishedAt.UTC().Format(time.RFC3339)
		r.Duration = run.FinishedAt.Sub(run.StartedAt).Round(time.Second).String()
	}
	steps := append([]results.Step(nil), run.Steps...)
	sort.SliceStable(steps, func(i, j int) bool { return rank(steps[i].Kind) < rank(steps[j].Kind) })
	for i, st := range steps {
		b := &builder{r: r, prefix: fmt.Sprintf("s%d", i), step: st, ts: ts}
		sec := Section{ID: b.prefix, Title: st.Kind + ": " + st.Name, Kind: st.Kind, Error: st.Error}
		if st.LimitedBy != "" && st.LimitedByEvidence != nil {
			sec.LimitedBy, sec.LimitedByRule = st.LimitedBy, st.LimitedByEvidence.Rule
		}
		if st.Status != results.StatusComplete {
			sec.Status = st.Status
		}
		b.sec = &sec
		b.body()
		b.observe()
		r.Sections = append(r.Sections, sec)
		if r.estimate() > MaxBytes {
			// The rest would only cost memory to be refused.
			r.tooBig = true
			break
		}
	}
	r.Warnings = Caveats(run)
	r.Verdicts, r.Repeats = verdictTable(run.Verdicts), repeatTable(run.Repeats)
	if b := run.Baseline; b != nil {
		note := b.Summary()
		r.BaselineNote, r.Baseline = strings.ToUpper(note[:1])+note[1:]+".", baselineTable(b)
	}
	r.environment(run)
	r.Defs = definitions(r.words)
	return r
}

func rank(kind string) int {
	if n, ok := layerRank[kind]; ok {
		return n
	}
	return 100
}

// builder fills one step's section.
type builder struct {
	r      *Report
	sec    *Section
	step   results.Step
	prefix string
	ts     *results.Timeseries
	n      int
}

func (b *builder) body() {
	switch body := b.step.Body.(type) {
	case *results.Device:
		b.device(body)
	case *results.IOCal:
		b.iocal(body)
	case *results.OLTP:
		b.oltp(body)
	case *results.OLTPBuild:
		b.oltpBuild(body)
	case *results.OLTPCheck:
		b.consistency(body.Consistency)
	case *results.Ramp:
		b.ramp(body)
	case *results.Scale:
		b.scale(body)
	case *results.DSSBuild:
		b.dssBuild(body)
	case *results.DSS:
		b.dss(body)
	case *results.Durability:
		b.durability(body)
	case *results.Replay:
		b.replay(body)
	default:
		b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("This calibra does not know step kind %q; its keys are in results.json.", b.step.Kind))
	}
}

// chart registers a chart and returns its reference.
func (b *builder) chart(title string, c assets.Chart) ChartRef {
	b.n++
	c.ID = fmt.Sprintf("%s-c%d", b.prefix, b.n)
	b.r.charts = append(b.r.charts, c)
	b.r.points += points(c)
	return ChartRef{ID: c.ID, Title: title}
}

func (b *builder) charts(heading string, refs ...ChartRef) {
	b.sec.Blocks = append(b.sec.Blocks, Block{Heading: heading, Charts: refs})
}

func (b *builder) table(t Table) {
	if len(t.Rows) == 0 {
		return
	}
	b.sec.Blocks = append(b.sec.Blocks, Block{Table: &t})
}

func (b *builder) note(format string, args ...any) {
	b.sec.Blocks = append(b.sec.Blocks, Block{Note: fmt.Sprintf(format, args...)})
}

// card adds a headline card: a figure and the verdict of the point it
// comes from (a sweep's point, a ramp's load), taken from that point by
// the caller, never the step's, which may be another point's.
func (b *builder) card(name, value, unit, note, limitedBy string) {
	if b.step.Status != results.StatusComplete {
		note = b.step.Status + ": " + note
	}
	b.r.Cards = append(b.r.Cards, Card{Name: name, Value: value, Unit: unit, Note: note, LimitedBy: limitedBy})
}

// windowCard adds a headline card of a figure over the step's own window
// (a run's NOPM, a power test's geomean): the step's verdict is its own.
func (b *builder) windowCard(name, value, unit, note string) {
	b.card(name, value, unit, note, b.step.LimitedBy)
}

func (b *builder) missing(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("%s not measured: %s", k, m[k]))
	}
}

// Write rebuilds report.html and report.md in a run directory from its
// results.json and timeseries.csv.
func Write(dir string) error {
	run, err := results.Load(dir)
	if err != nil {
		return err
	}
	ts, err := results.LoadTimeseries(dir)
	if err != nil {
		return err
	}
	rep, err := bounded(dir, run, ts)
	if err != nil {
		return err
	}
	h, err := rep.render(dir, rep.HTML)
	if err != nil {
		return err
	}
	m, err := rep.render(dir, rep.Markdown)
	if err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "report.html"), h); err != nil {
		return err
	}
	return results.WriteFileAtomic(filepath.Join(dir, "report.md"), m)
}

// Page is report.html of a run read already (calibra serve renders it
// from the results store), bounded as Write bounds it; name names the run
// in a refusal.
func Page(name string, run *results.Run, ts *results.Timeseries) ([]byte, error) {
	rep, err := bounded(name, run, ts)
	if err != nil {
		return nil, err
	}
	return rep.render(name, rep.HTML)
}

// bounded is Build, estimated from the counts first, then while laid
// out: a report past MaxBytes is refused (render bounds it as written),
// never half written.
func bounded(name string, run *results.Run, ts *results.Timeseries) (*Report, error) {
	if len(run.Steps) > MaxBytes/minStepBytes {
		return nil, tooBig(name, len(run.Steps), 0)
	}
	rep := Build(run, ts)
	if rep.tooBig {
		return nil, tooBig(name, len(run.Steps), rep.points)
	}
	rep.steps = len(run.Steps)
	return rep, nil
}

// render writes one of the report's files (write: HTML or Markdown) into
// memory, up to MaxBytes.
func (r *Report) render(name string, write func(io.Writer) error) ([]byte, error) {
	b := &boundedBuffer{max: MaxBytes}
	if err := write(b); err != nil {
		if errors.Is(err, errTooBig) {
			return nil, tooBig(name, r.steps, r.points)
		}
		return nil, err
	}
	return b.Bytes(), nil
}
