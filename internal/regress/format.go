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

// Write prints the verdict: text (aligned), md, csv or json.
func Write(w io.Writer, b *results.Baseline, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(results.CSVRecord(results.BaselineHead))
		for _, r := range b.Rows() {
			cw.Write(results.CSVRecord(r))
		}
		cw.Flush()
		return cw.Error()
	case "md":
		fmt.Fprintf(w, "%s\n\n", results.MarkdownEscaper.Replace(b.Summary()))
		if len(b.Figures) == 0 {
			return nil
		}
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(results.BaselineHead, " | "), strings.Repeat(" --- |", len(results.BaselineHead)))
		for _, r := range b.Rows() {
			for i := range r {
				r[i] = results.MarkdownEscaper.Replace(r[i])
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		return nil
	}
	fmt.Fprintln(w, results.TerminalLine(b.Summary()))
	if len(b.Figures) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(results.BaselineHead, "\t"))
	for _, r := range b.Rows() {
		for i := range r {
			r[i] = results.TerminalLine(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
