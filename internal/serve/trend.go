package serve

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

//go:embed trend.js
var trendJS string

//go:embed live.js
var liveJS string

// trendSeries is one target's line: each point is [time in ms, median,
// min, max, n, regressed], with its label (a run's, or a day's count of
// runs) beside it.
type trendSeries struct {
	Name   string       `json:"name"`
	Points [][6]float64 `json:"points"`
	Labels []string     `json:"labels"`
}

type trendData struct {
	Metric string        `json:"metric"`
	Unit   string        `json:"unit"`
	PerDay bool          `json:"per_day"`
	Series []trendSeries `json:"series"`
}

type trendRow struct {
	Started   string `json:"started"`
	Label     string `json:"label"`
	URL       string `json:"url"`
	Target    string `json:"target"`
	Median    string `json:"median"`
	Min       string `json:"min"`
	Max       string `json:"max"`
	N         int    `json:"n"`
	Regressed int    `json:"regressed"`
}

type trendPage struct {
	frame
	Figures               []store.FigureName
	Targets               []string
	Metric, Label, Target string
	Unit, Better          string
	PerRun                bool
	Points                []trendRow
	Data                  template.JS
	JSONURL, CSVURL       string
}

// trendView draws one figure (metric=KIND.METRIC) across the runs that
// measured it, over time, a line per target, each point a day's runs
// (per=run: each run); label and target narrow it, and the runs that
// regressed against their baseline are marked.
func (s *Server) trendView(r *http.Request) (view, error) {
	v := r.URL.Query()
	p := trendPage{frame: s.frame("Trend"), Metric: v.Get("metric"), Label: v.Get("label"), Target: v.Get("target"), PerRun: v.Get("per") == "run",
		JSONURL: s.apiURL("trend", r), CSVURL: s.apiURL("trend.csv", r)}
	if _, err := path.Match(p.Label, ""); err != nil {
		return view{}, badRequest(fmt.Sprintf("the label %q is not a glob: use * ? and [...] as a shell does, e.g. array-*", p.Label))
	}
	ctx := r.Context()
	figs, err := s.store.FigureNames(ctx)
	if err != nil {
		return view{}, err
	}
	p.Figures = figs
	if p.Metric == "" && len(figs) > 0 {
		p.Metric = mostMeasured(figs).Name()
	}
	i := slices.IndexFunc(figs, func(f store.FigureName) bool { return f.Name() == p.Metric })
	if i < 0 {
		if p.Metric != "" {
			return view{}, notFound("no recorded run measured %s: choose a figure the store holds on the trend page", p.Metric)
		}
		return view{name: "trend", page: p, data: trendData{}, table: [][]string{trendHeader}}, nil
	}
	fig := figs[i]
	p.Unit, p.Better = fig.Unit, fig.Better
	points, err := s.store.FigureTrend(ctx, store.TrendQuery{Kind: fig.Kind, Metric: fig.Metric, Label: p.Label})
	if err != nil {
		return view{}, err
	}
	regressed, err := s.store.Regressed(ctx)
	if err != nil {
		return view{}, err
	}
	data := trendData{Metric: p.Metric, Unit: p.Unit, PerDay: !p.PerRun}
	seen := map[string]int{}
	add := func(target string, row trendRow, at time.Time, median, lo, hi float64) {
		i, ok := seen[target]
		if !ok {
			i = len(data.Series)
			seen[target] = i
			p.Targets = append(p.Targets, target)
			data.Series = append(data.Series, trendSeries{Name: results.TerminalLine(target)})
		}
		if p.Target != "" && target != p.Target {
			return
		}
		sr := &data.Series[i]
		sr.Points = append(sr.Points, [6]float64{float64(at.UnixMilli()), median, lo, hi, float64(row.N), float64(row.Regressed)})
		sr.Labels = append(sr.Labels, results.TerminalLine(row.Label))
		p.Points = append(p.Points, row)
	}
	if p.PerRun {
		for _, pt := range points {
			row := trendRow{Started: pt.StartedAt.UTC().Format(time.DateTime), Label: orDash(pt.Label), URL: s.runURL(pt.ID), Target: pt.Target(),
				Median: number(pt.Median), Min: number(pt.Min), Max: number(pt.Max), N: pt.N}
			if regressed[pt.ID] {
				row.Regressed = 1
			}
			add(pt.Target(), row, pt.StartedAt, pt.Median, pt.Min, pt.Max)
		}
	} else {
		for _, d := range store.PerDay(points, regressed) {
			row := trendRow{Started: d.Day.Format(day), Label: fmt.Sprintf("%d runs", d.Runs), URL: s.runURL(d.Last), Target: d.Target,
				Median: number(d.Median), Min: number(d.Min), Max: number(d.Max), N: d.Runs, Regressed: d.Regressed}
			add(d.Target, row, d.Day, d.Median, d.Min, d.Max)
		}
	}
	data.Series = slices.DeleteFunc(data.Series, func(sr trendSeries) bool { return len(sr.Points) == 0 })
	// encoding/json escapes <, > and &: no label can close the script element.
	b, err := json.Marshal(data)
	if err != nil {
		return view{}, err
	}
	p.Data = template.JS(b)
	table := [][]string{trendHeader}
	for _, row := range p.Points {
		table = append(table, []string{row.Started, row.Label, row.Target, row.Median, row.Min, row.Max, strconv.Itoa(row.N), strconv.Itoa(row.Regressed)})
	}
	return view{name: "trend", page: p, data: map[string]any{"metric": p.Metric, "unit": p.Unit, "per_day": !p.PerRun, "points": p.Points}, table: table}, nil
}

// trendHeader heads the trend's CSV: a row a point (a day, or a run).
var trendHeader = []string{"started", "label", "target", "median", "min", "max", "n", "regressed"}

// mostMeasured is the figure the most runs measured (the first such).
func mostMeasured(figs []store.FigureName) store.FigureName {
	best := figs[0]
	for _, f := range figs[1:] {
		if f.Runs > best.Runs {
			best = f
		}
	}
	return best
}

// number prints a figure with two decimals at most.
func number(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// static answers the embedded files: ECharts (the reports' copy), the
// trend chart's renderer and the style sheet.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	body, ctype := "", "text/javascript; charset=utf-8"
	switch r.PathValue("name") {
	case "echarts.min.js":
		body = string(embedded.ECharts)
	case "trend.js":
		body = trendJS
	case "live.js":
		body = liveJS
	case "serve.css":
		// The reports' style sheet, then serve's own.
		body, ctype = string(embedded.CSS)+"\n"+serveCSS, "text/css; charset=utf-8"
	default:
		s.fail(w, http.StatusNotFound, "no such file")
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
}
