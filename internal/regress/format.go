package regress

import (
	"fmt"
	"io"

	"github.com/calibra-bench/calibra/internal/results"
)

// Write prints the verdict: text (aligned), md, csv or json.
func Write(w io.Writer, b *results.Baseline, format string) error {
	t := results.Table{Head: results.BaselineHead, Rows: b.Rows()}
	switch format {
	case "json":
		return results.WriteJSON(w, b)
	case "csv":
		return t.Write(w, format)
	case "md":
		fmt.Fprintf(w, "%s\n\n", results.MarkdownEscaper.Replace(b.Summary()))
	default:
		fmt.Fprintln(w, results.TerminalLine(b.Summary()))
	}
	if len(b.Figures) == 0 {
		return nil
	}
	return t.Write(w, format)
}
