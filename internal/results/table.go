package results

import (
	"encoding/csv"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is a header and rows of cells, as history and the baseline's
// verdict print them.
type Table struct {
	Head []string
	Rows [][]string
}

// Write prints t as text (aligned columns, "-" for an empty cell), md (a
// Markdown table) or csv, every cell escaped for that reader
// (TerminalLine, MarkdownEscaper, CSVCell): cells hold labels, names and
// paths read from runs others may have written.
func (t Table) Write(w io.Writer, format string) error {
	switch format {
	case "csv":
		c := csv.NewWriter(w)
		c.Write(CSVRecord(append([]string(nil), t.Head...)))
		for _, r := range t.Rows {
			c.Write(CSVRecord(append([]string(nil), r...)))
		}
		c.Flush()
		return c.Error()
	case "md":
		var b strings.Builder
		line := func(cells []string) {
			b.WriteString("|")
			for _, c := range cells {
				b.WriteString(" " + MarkdownEscaper.Replace(c) + " |")
			}
			b.WriteString("\n")
		}
		line(t.Head)
		b.WriteString("|" + strings.Repeat(" --- |", len(t.Head)) + "\n")
		for _, r := range t.Rows {
			line(r)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(cells []string) {
		for i, c := range cells {
			if c == "" {
				c = "-"
			}
			if i > 0 {
				io.WriteString(tw, "\t")
			}
			io.WriteString(tw, TerminalLine(c))
		}
		io.WriteString(tw, "\n")
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
	return tw.Flush()
}
