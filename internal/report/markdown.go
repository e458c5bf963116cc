package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// mdEscape keeps a value from being read as markdown or HTML where the
// report is pasted: pipes would split cells, angle brackets open tags.
// Every field report.md prints goes through it, the ones calibra itself
// words too: a results.json may come from elsewhere.
var mdEscape = results.MarkdownEscaper

// Markdown writes report.md: the headline figures and tables of every step,
// for pasting into tickets.
func (r *Report) Markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", mdEscape.Replace(r.Title))
	fmt.Fprintf(bw, "Status: **%s** · started %s", mdEscape.Replace(r.Status), mdEscape.Replace(r.Started))
	if r.Duration != "" {
		fmt.Fprintf(bw, " · duration %s", mdEscape.Replace(r.Duration))
	}
	bw.WriteString("\n\n")
	if r.Status != "complete" {
		fmt.Fprintf(bw, "> **This run is %s**", mdEscape.Replace(r.Status))
		if r.Error != "" {
			fmt.Fprintf(bw, ": %s", mdEscape.Replace(r.Error))
		}
		bw.WriteString(". Its figures cover only what was measured before it stopped.\n\n")
	}
	if len(r.Warnings) > 0 {
		bw.WriteString("**Read the figures with these caveats:**\n\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(bw, "- %s\n", mdEscape.Replace(w))
		}
		bw.WriteString("\n")
	}
	if r.BaselineNote != "" {
		fmt.Fprintf(bw, "%s\n\n", mdEscape.Replace(r.BaselineNote))
	}
	for _, t := range []*Table{r.Baseline, r.Verdicts, r.Repeats} {
		if t != nil {
			fmt.Fprintf(bw, "**%s**\n\n", mdEscape.Replace(t.Caption))
			mdTable(bw, t)
		}
	}
	if len(r.Cards) > 0 {
		t := Table{Head: []string{"headline", "value", "limited by", "note"}}
		for _, c := range r.Cards {
			v := c.Value
			if c.Unit != "" {
				v += " " + c.Unit
			}
			row := cells(c.Name, v, c.LimitedBy, c.Note)
			row[2].Class, row[3].Class = "t", "t"
			t.Rows = append(t.Rows, row)
		}
		mdTable(bw, &t)
	}
	for _, s := range r.Sections {
		fmt.Fprintf(bw, "## %s", mdEscape.Replace(s.Title))
		if s.Status != "" {
			fmt.Fprintf(bw, " (%s)", mdEscape.Replace(s.Status))
		}
		bw.WriteString("\n\n")
		if s.Error != "" {
			fmt.Fprintf(bw, "> %s\n\n", mdEscape.Replace(s.Error))
		}
		if s.LimitedBy != "" {
			fmt.Fprintf(bw, "Limited by **%s**: %s.\n\n", mdEscape.Replace(s.LimitedBy), mdEscape.Replace(s.LimitedByRule))
		}
		for _, n := range s.Notes {
			fmt.Fprintf(bw, "%s\n\n", mdEscape.Replace(n))
		}
		for _, b := range s.Blocks {
			if b.Table != nil && b.Table.Headline {
				if b.Table.Caption != "" {
					fmt.Fprintf(bw, "**%s**\n\n", mdEscape.Replace(b.Table.Caption))
				}
				mdTable(bw, b.Table)
			}
		}
	}
	for _, t := range r.Env[:min(len(r.Env), 3)] {
		var parts []string
		for _, row := range t.Rows {
			if row[1].Text != "" {
				parts = append(parts, row[0].Text+" "+row[1].Text)
			}
		}
		fmt.Fprintf(bw, "%s: %s  \n", mdEscape.Replace(t.Caption), mdEscape.Replace(strings.Join(parts, ", ")))
	}
	bw.WriteString("\nFull report, charts and metric definitions: report.html beside this file.\n")
	return bw.Flush()
}

func mdTable(w *bufio.Writer, t *Table) {
	row := func(texts []string) {
		w.WriteString("|")
		for _, c := range texts {
			fmt.Fprintf(w, " %s |", mdEscape.Replace(c))
		}
		w.WriteString("\n")
	}
	row(t.Head)
	w.WriteString("|")
	for i := range t.Head {
		// Text columns (the first, and those of class "t") align left.
		if i == 0 || (len(t.Rows) > 0 && i < len(t.Rows[0]) && t.Rows[0][i].Class == "t") {
			w.WriteString("---|")
		} else {
			w.WriteString("--:|")
		}
	}
	w.WriteString("\n")
	for _, r := range t.Rows {
		texts := make([]string, len(r))
		for i, c := range r {
			texts[i] = c.Text
		}
		row(texts)
	}
	w.WriteString("\n")
}
