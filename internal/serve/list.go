package serve

import (
	_ "embed"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

//go:embed serve.tmpl
var pagesTmpl string

//go:embed serve.css
var serveCSS string

// pages are calibra serve's own pages. Every text from the store goes
// through line (results.TerminalLine) before html/template escapes it:
// a control or bidi character shows as its code point, and cannot
// reorder or hide what a page says.
var pages = template.Must(template.New("serve").Funcs(template.FuncMap{"line": results.TerminalLine}).Parse(pagesTmpl))

// embedded are the reports' style sheet and ECharts (no charts: nothing
// that could fail to encode).
var embedded, _ = assets.NewPage(nil)

// frame is what every page's top needs: its title, the store, and the
// path before every address (the token's).
type frame struct {
	Title, Store, Base string
}

func (s *Server) frame(title string) frame {
	return frame{Title: title, Store: s.store.Where, Base: s.base}
}

type errorPage struct {
	frame
	Text string
}

// DefaultLimit is how many runs the list shows before "show all".
const DefaultLimit = 500

// column is a sortable column of the run list.
type column struct {
	Key, Title string
	order      func(a, b *store.Row) int
}

var columns = []column{
	{"started", "started (UTC)", func(a, b *store.Row) int { return a.StartedAt.Compare(b.StartedAt) }},
	{"label", "label", func(a, b *store.Row) int { return strings.Compare(a.Label, b.Label) }},
	{"status", "status", func(a, b *store.Row) int { return strings.Compare(a.Status, b.Status) }},
	{"engine", "engine", func(a, b *store.Row) int { return strings.Compare(a.Engine, b.Engine) }},
	{"host", "host", func(a, b *store.Row) int { return strings.Compare(a.Host, b.Host) }},
	{"storage", "storage", func(a, b *store.Row) int { return strings.Compare(a.Storage, b.Storage) }},
	{"study", "study", func(a, b *store.Row) int { return strings.Compare(a.Study, b.Study) }},
	{"figures", "figures", func(a, b *store.Row) int { return a.Figures - b.Figures }},
}

// listQuery is the run list's filter, sort and limit, from the URL.
type listQuery struct {
	Label, Engine, Status string
	Sort                  string // a column's key, "-" first for descending
	Limit                 int
}

func parseListQuery(v url.Values) (listQuery, string) {
	q := listQuery{Label: v.Get("label"), Engine: v.Get("engine"), Status: v.Get("status"), Sort: v.Get("sort"), Limit: DefaultLimit}
	if q.Sort == "" {
		q.Sort = "-started"
	}
	if _, err := path.Match(q.Label, ""); err != nil {
		return q, "the label " + strconv.Quote(q.Label) + " is not a glob: use * ? and [...] as a shell does, e.g. array-*"
	}
	if columnOf(q.Sort) == nil {
		return q, "sort " + strconv.Quote(q.Sort) + " names no column"
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return q, "limit " + strconv.Quote(l) + " is not a number of runs (0 for all)"
		}
		q.Limit = n
	}
	return q, ""
}

func columnOf(sortKey string) *column {
	key := strings.TrimPrefix(sortKey, "-")
	for i := range columns {
		if columns[i].Key == key {
			return &columns[i]
		}
	}
	return nil
}

// url is the list's address with this query, changed by set.
func (q listQuery) url(set func(*listQuery)) string {
	c := q
	if set != nil {
		set(&c)
	}
	v := url.Values{}
	for k, s := range map[string]string{"label": c.Label, "engine": c.Engine, "status": c.Status} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if c.Sort != "-started" {
		v.Set("sort", c.Sort)
	}
	if c.Limit != DefaultLimit {
		v.Set("limit", strconv.Itoa(c.Limit))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

type listRow struct {
	ID, URL, Started, Label, Status, Engine, Host, Storage, Study string
	Figures                                                       int
}

type headCell struct{ Title, URL, Arrow string }

type listPage struct {
	frame
	listQuery
	Engines, Statuses     []string
	Columns               []headCell
	Rows                  []listRow
	Shown, Matched, Total int
	AllURL                string
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q, bad := parseListQuery(r.URL.Query())
	if bad != "" {
		s.fail(w, http.StatusBadRequest, "%s", bad)
		return
	}
	all, err := s.store.History(r.Context(), store.Query{Label: q.Label})
	if err != nil {
		s.internal(w, err)
		return
	}
	p := listPage{frame: s.frame("Runs"), listQuery: q}
	engines, statuses := map[string]bool{}, map[string]bool{}
	var rows []*store.Row
	for i := range all {
		row := &all[i]
		engines[row.Engine], statuses[row.Status] = true, true
		if (q.Engine == "" || row.Engine == q.Engine) && (q.Status == "" || row.Status == q.Status) {
			rows = append(rows, row)
		}
	}
	p.Engines, p.Statuses = sortedKeys(engines), sortedKeys(statuses)
	col := columnOf(q.Sort)
	desc := strings.HasPrefix(q.Sort, "-")
	sort.SliceStable(rows, func(i, j int) bool {
		if desc {
			return col.order(rows[j], rows[i]) < 0
		}
		return col.order(rows[i], rows[j]) < 0
	})
	p.Total, p.Matched = len(all), len(rows)
	if q.Limit > 0 && len(rows) > q.Limit {
		rows = rows[:q.Limit]
		p.AllURL = s.base + q.url(func(c *listQuery) { c.Limit = 0 })
	}
	p.Shown = len(rows)
	for _, c := range columns {
		h := headCell{Title: c.Title}
		next := c.Key
		switch q.Sort {
		case c.Key:
			h.Arrow, next = " ↑", "-"+c.Key
		case "-" + c.Key:
			h.Arrow = " ↓"
		}
		h.URL = s.base + q.url(func(c *listQuery) { c.Sort = next })
		p.Columns = append(p.Columns, h)
	}
	p.Rows = make([]listRow, len(rows))
	for i, row := range rows {
		engine := row.Engine
		if v := strings.Fields(row.EngineVersion); len(v) > 0 {
			engine += " " + v[0]
		}
		p.Rows[i] = listRow{ID: row.ID, URL: s.runURL(row.ID), Started: row.StartedAt.UTC().Format("2006-01-02 15:04:05"), Label: orDash(row.Label),
			Status: row.Status, Engine: orDash(engine), Host: orDash(row.Host), Storage: orDash(row.Storage), Study: orDash(row.Study), Figures: row.Figures}
	}
	s.render(w, "list", p)
}

// runURL is a run's report.
func (s *Server) runURL(id string) string { return s.base + "/runs/" + url.PathEscape(id) + "/" }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// render writes one of the pages.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A failure midway (the client went away) has no one left to tell:
	// the status line is sent already.
	_ = pages.ExecuteTemplate(w, name, data)
}
