package serve

import (
	"cmp"
	_ "embed"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

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

// DefaultLimit is how many runs a page of the list shows.
const DefaultLimit = 100

// column is a sortable column of the run list: its key is the store's
// (store.OrderColumns).
type column struct{ Key, Title string }

var columns = []column{{"started", "started (UTC)"}, {"label", "label"}, {"status", "status"}, {"engine", "engine"},
	{"host", "host"}, {"storage", "storage"}, {"study", "study"}, {"figures", "figures"}}

// listQuery is the run list's filters, sort and page, from the URL.
type listQuery struct {
	Label, Engine, Status, Host, Storage string
	Since, Until                         string // days, 2006-01-02, both included
	Sort                                 string // a column's key, "-" first for descending
	Limit, Page                          int    // runs a page (0: all), from page 1
}

// day is the date format of the list's range.
const day = "2006-01-02"

func parseListQuery(v url.Values) (listQuery, string) {
	q := listQuery{Label: v.Get("label"), Engine: v.Get("engine"), Status: v.Get("status"), Host: v.Get("host"), Storage: v.Get("storage"),
		Since: v.Get("since"), Until: v.Get("until"), Sort: cmp.Or(v.Get("sort"), "-started"), Limit: DefaultLimit, Page: 1}
	for what, glob := range map[string]string{"label": q.Label, "host": q.Host, "storage": q.Storage} {
		if _, err := path.Match(glob, ""); err != nil {
			return q, "the " + what + " " + strconv.Quote(glob) + " is not a glob: use * ? and [...] as a shell does, e.g. array-*"
		}
	}
	for _, d := range []string{q.Since, q.Until} {
		if _, err := time.Parse(day, d); d != "" && err != nil {
			return q, strconv.Quote(d) + " is not a day: give it as 2026-03-02"
		}
	}
	if _, ok := store.OrderColumns[strings.TrimPrefix(q.Sort, "-")]; !ok {
		return q, "sort " + strconv.Quote(q.Sort) + " names no column"
	}
	for name, n := range map[string]*int{"limit": &q.Limit, "page": &q.Page} {
		if l := v.Get(name); l != "" {
			k, err := strconv.Atoi(l)
			if err != nil || k < 0 || name == "page" && k < 1 {
				return q, name + " " + strconv.Quote(l) + " is not a number of runs (limit 0 for all) or a page (from 1)"
			}
			*n = k
		}
	}
	return q, ""
}

// store is the query's selection of runs, for the store.
func (q listQuery) store() store.Query {
	sq := store.Query{Label: q.Label, Engine: q.Engine, Status: q.Status, Host: q.Host, Storage: q.Storage, Order: q.Sort, Limit: q.Limit}
	if q.Limit > 0 {
		sq.Offset = (q.Page - 1) * q.Limit
	}
	sq.Since, _ = time.Parse(day, q.Since)
	if until, err := time.Parse(day, q.Until); err == nil {
		sq.Until = until.AddDate(0, 0, 1)
	}
	return sq
}

// url is the list's address with this query, changed by set.
func (q listQuery) url(set func(*listQuery)) string {
	c := q
	if set != nil {
		set(&c)
	}
	v := url.Values{}
	for k, s := range map[string]string{"label": c.Label, "engine": c.Engine, "status": c.Status, "host": c.Host, "storage": c.Storage, "since": c.Since, "until": c.Until} {
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
	if c.Page > 1 {
		v.Set("page", strconv.Itoa(c.Page))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// listRow is a run as the list, its JSON and its CSV give it. Status is
// "stopped" for a run recorded as running whose heartbeat stopped.
type listRow struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Started string `json:"started"`
	Label   string `json:"label"`
	Status  string `json:"status"`
	Engine  string `json:"engine"`
	Host    string `json:"host"`
	Storage string `json:"storage"`
	Study   string `json:"study"`
	Figures int    `json:"figures"`
	Phase   string `json:"phase,omitempty"`
}

type headCell struct{ Title, URL, Arrow string }

type listPage struct {
	frame
	listQuery
	store.Choices
	Columns                  []headCell
	Running, Rows            []listRow
	Shown, Matched, Pages    int
	AllURL, PrevURL, NextURL string
	JSONURL, CSVURL          string
}

// listView is the run list: the runs recorded as running first (those
// that stopped without a finish say so), then a page of the runs the
// filters select, in the order asked.
func (s *Server) listView(r *http.Request) (view, error) {
	q, bad := parseListQuery(r.URL.Query())
	if bad != "" {
		return view{}, badRequest(bad)
	}
	ctx := r.Context()
	p := listPage{frame: s.frame("Runs"), listQuery: q}
	var err error
	if p.Choices, err = s.store.Choices(ctx); err != nil {
		return view{}, err
	}
	if p.Matched, err = s.store.Matching(ctx, q.store()); err != nil {
		return view{}, err
	}
	rows, err := s.store.History(ctx, q.store())
	if err != nil {
		return view{}, err
	}
	running, err := s.store.History(ctx, store.Query{Status: results.StatusRunning})
	if err != nil {
		return view{}, err
	}
	states, err := s.store.LiveStates(ctx)
	if err != nil {
		return view{}, err
	}
	p.Running = s.listRows(running, states)
	p.Rows = s.listRows(rows, states)
	p.Shown = len(rows)
	if q.Limit > 0 {
		p.Pages = max(1, (p.Matched+q.Limit-1)/q.Limit)
		if p.Matched > q.Limit {
			p.AllURL = s.base + q.url(func(c *listQuery) { c.Limit, c.Page = 0, 1 })
		}
		if q.Page > 1 {
			p.PrevURL = s.base + q.url(func(c *listQuery) { c.Page-- })
		}
		if q.Page < p.Pages {
			p.NextURL = s.base + q.url(func(c *listQuery) { c.Page++ })
		}
	}
	for _, c := range columns {
		h := headCell{Title: c.Title}
		next := c.Key
		switch q.Sort {
		case c.Key:
			h.Arrow, next = " ↑", "-"+c.Key
		case "-" + c.Key:
			h.Arrow = " ↓"
		}
		h.URL = s.base + q.url(func(c *listQuery) { c.Sort, c.Page = next, 1 })
		p.Columns = append(p.Columns, h)
	}
	p.JSONURL, p.CSVURL = s.apiURL("runs", r), s.apiURL("runs.csv", r)
	table := [][]string{{"id", "started", "label", "status", "engine", "host", "storage", "study", "figures"}}
	for _, row := range append(slices.Clone(p.Running), p.Rows...) {
		table = append(table, []string{row.ID, row.Started, row.Label, row.Status, row.Engine, row.Host, row.Storage, row.Study, strconv.Itoa(row.Figures)})
	}
	return view{name: "list", page: p, data: map[string]any{"running": p.Running, "runs": p.Rows, "matched": p.Matched, "page": q.Page, "pages": p.Pages}, table: table}, nil
}

// listRows are rows as the list shows them: a run recorded as running
// whose heartbeat stopped is "stopped", without a finish.
func (s *Server) listRows(rows []store.Row, states map[string]store.LiveState) []listRow {
	out := make([]listRow, len(rows))
	now := s.now()
	for i, row := range rows {
		engine := row.Engine
		if v := strings.Fields(row.EngineVersion); len(v) > 0 {
			engine += " " + v[0]
		}
		out[i] = listRow{ID: row.ID, URL: s.runURL(row.ID), Started: row.StartedAt.UTC().Format(time.DateTime), Label: orDash(row.Label),
			Status: row.Status, Engine: orDash(engine), Host: orDash(row.Host), Storage: orDash(cmp.Or(row.Storage, row.Device)), Study: orDash(row.Study), Figures: row.Figures}
		if row.Status == results.StatusRunning {
			st := states[row.ID]
			out[i].URL, out[i].Phase = s.base+"/live?run="+url.QueryEscape(row.ID), st.Phase
			if st.Stopped(now) {
				out[i].Status = statusStopped
			}
		}
	}
	return out
}

// statusStopped is how serve shows a run recorded as running whose
// heartbeat stopped (store.StaleAfter): killed, or its host gone.
const statusStopped = "stopped"

// runURL is a run's report.
func (s *Server) runURL(id string) string { return s.base + "/runs/" + url.PathEscape(id) + "/" }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
