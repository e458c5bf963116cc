package regress

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/calibra-bench/calibra/internal/results"
)

// Headline is the verdict in one line: what the run was judged against
// and what came of it.
func Headline(b *results.Baseline) string {
	s := fmt.Sprintf("against the baseline %s (%s): %s", b.Spec, plural(len(b.Runs), "stored run"), b.Verdict)
	if b.Reason != "" {
		s += ": " + b.Reason
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Head is the figures table's header.
var Head = []string{"figure", "run", "baseline", "change", "p", "n (run, baseline)", "verdict"}

// Rows are the figures as the table's cells.
func Rows(b *results.Baseline) [][]string {
	var out [][]string
	for _, f := range b.Figures {
		unit := ""
		if f.Unit != "" {
			unit = " " + f.Unit
		}
		change := "-"
		if f.DeltaPct != nil {
			change = fmt.Sprintf("%+.1f%%", *f.DeltaPct)
		}
		p := "-"
		if f.P != nil {
			p = fmt.Sprintf("%.3f", *f.P)
		}
		title := f.Title
		if f.Step != "" {
			title += " [" + f.Step + "]"
		}
		out = append(out, []string{title, results.Num(f.RunMedian) + unit, results.Num(f.BaseMedian) + unit, change, p,
			fmt.Sprintf("%d, %d", f.RunN, f.BaseN), f.Verdict})
	}
	return out
}

// Formats are the verdict's output formats, as compare's.
var Formats = []string{"text", "md", "csv", "json"}

// Write prints the verdict: text (aligned), md, csv or json.
func Write(w io.Writer, b *results.Baseline, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(results.CSVRecord(Head))
		for _, r := range Rows(b) {
			cw.Write(results.CSVRecord(r))
		}
		cw.Flush()
		return cw.Error()
	case "md":
		fmt.Fprintf(w, "%s\n\n", results.MarkdownEscaper.Replace(Headline(b)))
		if len(b.Figures) == 0 {
			return nil
		}
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(Head, " | "), strings.Repeat(" --- |", len(Head)))
		for _, r := range Rows(b) {
			for i := range r {
				r[i] = results.MarkdownEscaper.Replace(r[i])
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return nil
	}
	fmt.Fprintln(w, results.TerminalLine(Headline(b)))
	if len(b.Figures) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(Head, "\t"))
	for _, r := range Rows(b) {
		for i := range r {
			r[i] = results.TerminalLine(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
