package report

import (
	_ "embed"
	"html/template"
	"io"

	"github.com/calibra-bench/calibra/internal/report/assets"
)

//go:embed report.tmpl
var reportTmpl string

// tableView is a table with or without a header row (key-value tables
// have none).
type tableView struct {
	*Table
	HasHead bool
}

// HeadCells are the header cells, aligned as the column's first row.
func (t tableView) HeadCells() []Cell {
	out := make([]Cell, len(t.Head))
	for i, h := range t.Head {
		out[i].Text = h
		if len(t.Rows) > 0 && i < len(t.Rows[0]) && t.Rows[0][i].Class == "t" {
			out[i].Class = "t"
		}
	}
	return out
}

var page = template.Must(assets.Template(template.FuncMap{
	"tbl": func(t *Table) tableView { return tableView{t, true} },
	"kv":  func(t Table) tableView { return tableView{&t, false} },
}).Parse(reportTmpl))

// HTML writes report.html: html/template escapes every value; the charts'
// data travels as JSON in a script element, drawn on canvas.
func (r *Report) HTML(w io.Writer) error {
	a, err := assets.NewPage(r.charts)
	if err != nil {
		return err
	}
	return assets.Execute(w, page, struct {
		R             *Report
		Assets        assets.Page
		HasTimeseries bool
	}{r, a, r.hasTimeseries})
}
