// Package assets holds what every calibra HTML page embeds: the chart
// library (Apache ECharts, vendored under echarts/, see its README), the
// chart renderer, the style sheet, the page skeleton, and the chart specs
// the Go side fills in. The report and compare both build on it, so the
// pages look and behave alike and neither imports the other.
package assets

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io"
	"math"
	"strconv"

	"github.com/calibra-bench/calibra/internal/results"
)

var (
	//go:embed echarts/echarts.min.js
	echartsJS string
	//go:embed calibra.js
	rendererJS string
	//go:embed report.css
	css string
	//go:embed page.tmpl
	pageTmpl string
)

// Page is what the "page" template needs beside the caller's own data.
type Page struct {
	CSS      template.CSS
	ECharts  template.JS
	Renderer template.JS
	Data     template.JS // the chart specs, as JSON
}

// NewPage encodes the charts for the page. encoding/json escapes <, > and
// & (and U+2028/9), so no value can close the script element it sits in;
// visibleJSON then shows the control and Hidden characters of its text.
func NewPage(charts []Chart) (Page, error) {
	if charts == nil {
		charts = []Chart{}
	}
	data, err := json.Marshal(struct {
		Charts []Chart `json:"charts"`
	}{charts})
	if err == nil {
		data, err = visibleJSON(data)
	}
	if err != nil {
		return Page{}, err
	}
	return Page{CSS: template.CSS(css), ECharts: template.JS(echartsJS), Renderer: template.JS(rendererJS), Data: template.JS(data)}, nil
}

// visibleJSON writes the control and Hidden characters of data's strings
// as text (\u202e, results.TerminalLine): the charts draw their names on a
// canvas, where an override would reorder a legend and its figures, and
// JSON.parse would turn an escape in the page back into the character.
func visibleJSON(data []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // the numbers stay as Num wrote them
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var visible func(v any) any
	visible = func(v any) any {
		switch v := v.(type) {
		case string:
			return results.TerminalLine(v)
		case []any:
			for i := range v {
				v[i] = visible(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = visible(v[k])
			}
		}
		return v
	}
	return json.Marshal(visible(v))
}

// Execute executes t's "page" with data into w, its control and Hidden
// characters written as code points (results.HTMLWriter).
func Execute(w io.Writer, t *template.Template, data any) error {
	h := results.NewHTMLWriter(w)
	if err := t.ExecuteTemplate(h, "page", data); err != nil {
		return err
	}
	return h.Flush()
}

// Template returns the page skeleton; the caller adds the templates
// "title" and "body" and executes it (Execute) with data that has an Assets
// field of type Page.
func Template(funcs template.FuncMap) *template.Template {
	return template.Must(template.New("page").Funcs(funcs).Parse(pageTmpl))
}

// Chart is one figure: series over a value (or category) x axis, with
// optional reference lines, shaded x ranges, a second y axis, or, when Kind
// is "timeline", segments on rows (a Gantt chart).
type Chart struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind,omitempty"` // "" (xy) or "timeline"
	XName      string    `json:"x_name,omitempty"`
	YName      string    `json:"y_name,omitempty"`
	Y2Name     string    `json:"y2_name,omitempty"`
	XLog       bool      `json:"x_log,omitempty"`
	YLog       bool      `json:"y_log,omitempty"`
	X          []Num     `json:"x,omitempty"` // shared by series without their own
	Categories []string  `json:"categories,omitempty"`
	Series     []Series  `json:"series,omitempty"`
	MarkY      []Mark    `json:"mark_y,omitempty"` // horizontal lines: bounds, SLAs
	MarkX      []Mark    `json:"mark_x,omitempty"` // vertical lines: saturation, max users
	Areas      []Area    `json:"areas,omitempty"`  // shaded x ranges: ramp-up
	Rows       []string  `json:"rows,omitempty"`   // timeline rows
	Segments   []Segment `json:"segments,omitempty"`
}

// Series is one line (or bar set) of a chart.
type Series struct {
	Name   string `json:"name"`
	Type   string `json:"type,omitempty"` // line (default), bar, scatter
	Y2     bool   `json:"y2,omitempty"`
	Dashed bool   `json:"dashed,omitempty"`
	Stack  string `json:"stack,omitempty"`
	X      []Num  `json:"x,omitempty"`
	Y      []Num  `json:"y"`
}

// Mark is a reference line at a value.
type Mark struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Y2    bool    `json:"y2,omitempty"` // a horizontal line on the right axis
}

// Area is a shaded x range.
type Area struct {
	Label string  `json:"label"`
	From  float64 `json:"from"`
	To    float64 `json:"to"`
}

// Segment is one bar of a timeline.
type Segment struct {
	Row   string  `json:"row"`
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
}

// Num is a plotted number: five significant digits (a chart shows no more,
// and an hour of samples stays small), null when NaN (not measured, so a
// gap, never a zero).
type Num float64

// MarshalJSON writes the number or null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 5, 64), nil
}

// Nums converts floats (NaN for gaps).
func Nums(v []float64) []Num {
	out := make([]Num, len(v))
	for i, f := range v {
		out[i] = Num(f)
	}
	return out
}

// Ptr converts an optional number, NaN when absent.
func Ptr(v *float64) Num {
	if v == nil {
		return Num(math.NaN())
	}
	return Num(*v)
}

// Hash is the Content-Security-Policy source that allows an inline script
// or style element whose content is text.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// ScriptHashes and StyleHashes allow the page skeleton's inline scripts
// (ECharts, the renderer) and its style sheet, and nothing else inline, in
// a page's Content-Security-Policy; the JSON data script is never run, so
// it needs none.
var (
	ScriptHashes = []string{Hash(echartsJS), Hash(rendererJS)}
	StyleHashes  = []string{Hash(css)}
)
