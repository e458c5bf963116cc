package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/calibra-bench/calibra/internal/results"
)

// Formats are the table's output formats.
var Formats = []string{"text", "md", "csv", "json"}

// Load reads the run directories; the first is the base.
func Load(dirs []string) ([]Run, error) {
	var runs []Run
	seen := map[string]int{}
	for _, d := range dirs {
		r, err := results.Load(d)
		if err != nil {
			return nil, err
		}
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
	return runs, nil
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
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	return fmt.Errorf("unknown format %q", format)
}

// Cell texts, as benchstat writes them.

// ValueText is a value with its unit and, for repetitions, its spread.
func (v *Value) Text(unit string) string {
	if v == nil {
		return "-"
	}
	s := num(v.Center)
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

func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || v == math.Trunc(v) && a < 1e15:
		return group(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
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

// cellsOf lays a row out: step, metric with its arrow, then per run the
// value and (after the base) the delta.
func (t *Table) cellsOf(row Row) []string {
	out := []string{row.Step, row.Name + " " + row.Arrow()}
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

func (t *Table) header() []string {
	out := []string{"step", "metric"}
	for i, r := range t.Runs {
		out = append(out, r.head(i))
		if i > 0 {
			out = append(out, "vs base")
		}
	}
	return out
}

const legend = "↑ higher is better, ↓ lower. ± is the 95% confidence interval of the median (6 or more repetitions) or half the range; " +
	"~ means no significant difference (Mann-Whitney U, p ≥ 0.05); n counts the repetitions of a step; with a single run on either side a delta is a value, with no verdict (repeat the steps: one run on a shared machine cannot tell a change from noise)."

func (t *Table) text(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header(), "\t")+"\t")
	for _, row := range t.Rows {
		fmt.Fprintln(tw, strings.Join(t.cellsOf(row), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	t.notes(w, "")
	return nil
}

func (t *Table) notes(w io.Writer, prefix string) {
	fmt.Fprintf(w, "\n%s%s\n", prefix, legend)
	for i, f := range t.Footnotes {
		fmt.Fprintf(w, "%s%d. %s\n", prefix, i+1, f)
	}
}

var mdEscape = strings.NewReplacer("|", `\|`, "\n", " ", "&", "&amp;", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`")

func (t *Table) markdown(w io.Writer) error {
	row := func(cells []string) {
		for i, c := range cells {
			cells[i] = mdEscape.Replace(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	h := t.header()
	row(h)
	align := make([]string, len(h))
	for i := range align {
		align[i] = "--:"
		if i < 2 {
			align[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(align, "|"))
	for _, r := range t.Rows {
		row(t.cellsOf(r))
	}
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
	_ = cw.Write([]string{"step", "metric", "unit", "higher_is_better", "run", "label", "status", "n", "center", "min", "max", "spread_pct", "delta_pct", "p", "within_noise"})
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
			rec := []string{r.Step, r.Name, r.Unit, strconv.FormatBool(r.Higher), strconv.Itoa(i), t.Runs[i].Label, t.Runs[i].Status,
				strconv.Itoa(v.N), f(&v.Center), f(&v.Lo), f(&v.Hi), f(v.SpreadPct), "", "", ""}
			if d := r.Deltas[i]; d != nil {
				rec[12], rec[13] = f(d.Pct), f(d.P)
				if d.P != nil {
					rec[14] = strconv.FormatBool(d.Noise)
				}
			}
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}
