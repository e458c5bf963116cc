package compare

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/calibra-bench/calibra/internal/results"
)

// Formats are the table's output formats.
var Formats = []string{"text", "md", "csv", "json"}

// Load reads the run directories; the first is the base.
func Load(dirs []string) ([]Run, error) {
	loaded := make([]*results.Run, len(dirs))
	for i, d := range dirs {
		r, err := results.Load(d)
		if err != nil {
			return nil, err
		}
		loaded[i] = r
	}
	return Named(dirs, loaded), nil
}

// Named names runs read already (calibra serve reads them from the
// results store), loaded[i] from dirs[i]: by label, else by directory,
// a name that repeats numbered.
func Named(dirs []string, loaded []*results.Run) []Run {
	var runs []Run
	seen := map[string]int{}
	for i, d := range dirs {
		r := loaded[i]
		label := r.Meta.Label
		if label == "" {
			label = filepath.Base(filepath.Clean(d))
		}
		if n := seen[label]; n > 0 {
			label = fmt.Sprintf("%s#%d", label, n+1)
		}
		seen[label]++
		runs = append(runs, Run{Dir: d, Label: label, Run: r})
	}
	return runs
}

// Write renders the table in a format: text (aligned columns), md, csv or
// json.
func (t *Table) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return t.text(w)
	case "md":
		return t.markdown(w)
	case "csv":
		return t.csv(w)
	case "json":
		return results.WriteJSON(w, t)
	}
	return fmt.Errorf("unknown format %q", format)
}

// Cell texts, as benchstat writes them.

// ValueText is a value with its unit and, for repetitions, its spread.
func (v *Value) Text(unit string) string {
	if v == nil {
		return "-"
	}
	s := results.Num(v.Center)
	if v.AtLeast {
		s = "≥ " + s
	}
	if unit != "" && unit != "%" {
		s += " " + unit
	} else if unit == "%" {
		s += "%"
	}
	if v.SpreadPct != nil {
		s += fmt.Sprintf(" ± %.0f%%", *v.SpreadPct)
	}
	return s
}

// Text is the delta: "+12.34%", "~" within noise, with p and n when there
// are repetitions.
func (d *Delta) Text(base, other *Value) string {
	if d == nil {
		return ""
	}
	var s string
	switch {
	case d.Noise:
		s = "~"
	case d.Pct == nil:
		s = "?"
	case math.Abs(*d.Pct) >= 100 && *d.Pct > 0:
		s = fmt.Sprintf("%.2f×", 1+*d.Pct/100)
	default:
		s = fmt.Sprintf("%+.2f%%", *d.Pct)
	}
	if d.Verdict == NoVerdictBound {
		return s + " (lower bound, no verdict)"
	}
	if d.Verdict == NoVerdictMethod {
		return s + " (methods differ, no verdict)"
	}
	if d.P != nil {
		return s + fmt.Sprintf(" (p=%.3f n=%s)", *d.P, nText(base, other))
	}
	return s + " (n=" + nText(base, other) + ", no verdict)"
}

func nText(a, b *Value) string {
	if a.N == b.N {
		return strconv.Itoa(a.N)
	}
	return fmt.Sprintf("%d+%d", a.N, b.N)
}

// mark is the verdict beside a delta: better, worse or nothing to say.
func (d *Delta) mark() string {
	if d == nil || (d.Verdict != "better" && d.Verdict != "worse") {
		return ""
	}
	return d.Verdict
}

// runHead names a run column, marking a run that did not complete.
func (r RunInfo) head(i int) string {
	s := r.Label
	if i == 0 {
		s = "base: " + s
	}
	if r.Status != results.StatusComplete {
		s += " [" + r.Status + "]"
	}
	return s
}

// cellsOf lays a row out: the metric's readable name with its arrow, then
// per run the value and (after the base) the delta.
func (t *Table) cellsOf(row Row) []string {
	out := []string{strings.TrimSpace(row.Title + " " + row.Arrow())}
	for i, v := range row.Values {
		out = append(out, v.Text(row.Unit))
		if i > 0 {
			d := ""
			if row.Deltas[i] != nil {
				d = row.Deltas[i].Text(row.Values[0], v)
				if m := row.Deltas[i].mark(); m != "" {
					d += " " + m
				}
			}
			out = append(out, d)
		}
	}
	return out
}

// limitCells is a step's limited_by as a row: each run's, then "a → b"
// against the base, or "same"; nil when no run says.
func (t *Table) limitCells(s StepInfo) []string {
	if strings.Join(s.LimitedBy, "") == "" {
		return nil
	}
	out := []string{"limited by"}
	for i, l := range s.LimitedBy {
		out = append(out, orDash(l))
		if i > 0 {
			if l == s.LimitedBy[0] {
				out = append(out, "same")
			} else {
				out = append(out, orDash(s.LimitedBy[0])+" → "+orDash(l))
			}
		}
	}
	return out
}

// groupTitle heads a step's rows, pointing at its doubt.
func (s StepInfo) groupTitle() string {
	if s.Footnote > 0 {
		return fmt.Sprintf("%s (doubtful: note %d)", s.Step, s.Footnote)
	}
	return s.Step
}

// groups walks the rows step by step.
func (t *Table) groups(f func(s StepInfo, rows []Row)) {
	at := 0
	for _, s := range t.Steps {
		end := at
		for end < len(t.Rows) && t.Rows[end].Step == s.Step {
			end++
		}
		f(s, t.Rows[at:end])
		at = end
	}
}

func (t *Table) header() []string {
	out := []string{"metric"}
	for i, r := range t.Runs {
		out = append(out, r.head(i))
		if i > 0 {
			out = append(out, "vs base")
		}
	}
	return out
}

const legend = "↑ higher is better, ↓ lower; no arrow: evidence of the step's window (CPU busy, I/O wait), shown but never judged. " +
	"± is the 95% confidence interval of the median (6 or more repetitions) or half the range; " +
	"~ means no significant difference (Mann-Whitney U, p ≥ 0.05); n counts the repetitions of a step; with a single run on either side a delta is a value, with no verdict (repeat the steps: one run on a shared machine cannot tell a change from noise)."

// barHalf is the width of a text bar on each side of zero.
const barHalf = 16

// barScale is the % a full bar stands for in a run's summary: its largest
// change, within 10% and 100% (a longer change is drawn full, with "+").
func (t *Table) barScale(run int) float64 {
	scale := 10.0
	for _, b := range t.Summary {
		if p := b.Pct[run]; p != nil {
			scale = math.Max(scale, math.Abs(*p))
		}
	}
	return math.Min(scale, 100)
}

// textBar draws a change around a zero axis: "      ████│" for -30%.
func textBar(pct *float64, scale float64) string {
	left, right := strings.Repeat(" ", barHalf), strings.Repeat(" ", barHalf)
	if pct == nil {
		return left + "│" + right
	}
	n := min(barHalf, int(math.Round(math.Abs(*pct)/scale*barHalf)))
	if *pct != 0 && n == 0 {
		n = 1
	}
	bar := strings.Repeat("█", n)
	over := math.Abs(*pct) > scale
	if *pct < 0 {
		if over {
			bar = "+" + bar[len("█"):]
		}
		left = strings.Repeat(" ", barHalf-n) + bar
	} else {
		if over {
			bar = bar[len("█"):] + "+"
		}
		right = bar + strings.Repeat(" ", barHalf-n)
	}
	return left + "│" + right
}

// pctText is a change in percent, or as a factor from +100% on.
func pctText(p *float64) string {
	switch {
	case p == nil:
		return "?"
	case *p >= 100:
		return fmt.Sprintf("%.2f×", 1+*p/100)
	}
	return fmt.Sprintf("%+.1f%%", *p)
}

// summaryLines are the headline's lines for one run against the base:
// name, change, bar, verdict.
func (t *Table) summaryLines(run int) [][]string {
	scale := t.barScale(run)
	var out [][]string
	for _, b := range t.Summary {
		if b.Verdict[run] == "" {
			continue
		}
		out = append(out, []string{b.Title + " " + arrow(b.Better), pctText(b.Pct[run]), textBar(b.Pct[run], scale), b.verdictText(run)})
	}
	return out
}

// verdictText is a bar's verdict with its p when it was tested.
func (b Bar) verdictText(run int) string {
	if p := b.P[run]; p != nil {
		return fmt.Sprintf("%s (p=%.3f)", b.Verdict[run], *p)
	}
	return b.Verdict[run]
}

func arrow(better string) string { return Metric{Better: better}.Arrow() }

func (t *Table) summaryHead(run int) string {
	return fmt.Sprintf("Headline: %s against %s", t.Runs[run].Label, t.Runs[0].Label)
}

// text writes the table for a terminal: labels and step names come from
// results.json files, so their control characters are escaped.
func (t *Table) text(w io.Writer) error {
	var b bytes.Buffer
	t.textTo(&b)
	_, err := io.WriteString(w, results.TerminalText(b.String()))
	return err
}

func (t *Table) textTo(w io.Writer) {
	for i := 1; i < len(t.Runs) && len(t.Summary) > 0; i++ {
		fmt.Fprintln(w, results.TerminalLine(t.summaryHead(i)))
		align(w, t.summaryLines(i), "  ")
		fmt.Fprintln(w)
	}
	lines := [][]string{t.header()}
	t.groups(func(s StepInfo, rows []Row) {
		lines = append(lines, []string{""}, []string{"[" + s.groupTitle() + "]"})
		if c := t.limitCells(s); c != nil {
			lines = append(lines, c)
		}
		for _, r := range rows {
			lines = append(lines, t.cellsOf(r))
		}
	})
	align(w, lines, "")
	t.notes(w, "")
}

// align writes lines as columns two spaces apart; a line of one cell is
// written as it is and does not widen the first column.
func align(w io.Writer, lines [][]string, indent string) {
	var width []int
	for _, l := range lines {
		if len(l) < 2 {
			continue
		}
		for i, c := range l {
			c = results.TerminalLine(c)
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range l {
			c = results.TerminalLine(c)
			b.WriteString(c)
			if i < len(l)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func (t *Table) notes(w io.Writer, prefix string) {
	fmt.Fprintf(w, "\n%s%s\n", prefix, legend)
	for i, f := range t.Footnotes {
		fmt.Fprintf(w, "%s%d. %s\n", prefix, i+1, f)
	}
}

var mdEscape = results.MarkdownEscaper

func (t *Table) markdown(w io.Writer) error {
	row := func(cells []string) {
		for i, c := range cells {
			cells[i] = mdEscape.Replace(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	// rule is the header's underline: l a left-aligned column, r right.
	rule := func(align string) {
		cols := make([]string, len(align))
		for i, a := range align {
			cols[i] = map[rune]string{'l': "---", 'r': "--:"}[a]
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(cols, "|"))
	}
	for i := 1; i < len(t.Runs) && len(t.Summary) > 0; i++ {
		fmt.Fprintf(w, "**%s**\n\n", mdEscape.Replace(t.summaryHead(i)))
		row([]string{"figure", "change", "bar", "verdict"})
		rule("lrll")
		for _, l := range t.summaryLines(i) {
			bar := "`" + l[2] + "`" // a code span keeps the bar's spaces
			fmt.Fprintf(w, "| %s |\n", strings.Join([]string{mdEscape.Replace(l[0]), mdEscape.Replace(l[1]), bar, mdEscape.Replace(l[3])}, " | "))
		}
		fmt.Fprintln(w)
	}
	h := t.header()
	row(h)
	rule("l" + strings.Repeat("r", len(h)-1))
	t.groups(func(s StepInfo, rows []Row) {
		g := make([]string, len(h))
		g[0] = "**" + mdEscape.Replace(s.groupTitle()) + "**"
		fmt.Fprintf(w, "| %s |\n", strings.Join(g, " | "))
		if c := t.limitCells(s); c != nil {
			row(c)
		}
		for _, r := range rows {
			row(t.cellsOf(r))
		}
	})
	fmt.Fprintf(w, "\n%s\n", mdEscape.Replace(legend))
	for i, f := range t.Footnotes {
		fmt.Fprintf(w, "\n%d. %s", i+1, mdEscape.Replace(f))
	}
	if len(t.Footnotes) > 0 {
		fmt.Fprintln(w)
	}
	return nil
}

// csv writes one line per metric and run: long form, for spreadsheets.
func (t *Table) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"step", "metric", "title", "unit", "better", "run", "label", "status", "n", "center", "min", "max", "spread_pct", "delta_pct", "p", "within_noise"})
	f := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	for _, r := range t.Rows {
		for i, v := range r.Values {
			if v == nil {
				continue
			}
			rec := []string{r.Step, r.Name, r.Title, r.Unit, r.Better, strconv.Itoa(i), t.Runs[i].Label, t.Runs[i].Status,
				strconv.Itoa(v.N), f(&v.Center), f(&v.Lo), f(&v.Hi), f(v.SpreadPct), "", "", ""}
			if d := r.Deltas[i]; d != nil {
				rec[13], rec[14] = f(d.Pct), f(d.P)
				if d.P != nil {
					rec[15] = strconv.FormatBool(d.Noise)
				}
			}
			_ = cw.Write(results.CSVRecord(rec))
		}
	}
	cw.Flush()
	return cw.Error()
}
