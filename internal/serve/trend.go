package serve

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

//go:embed trend.js
var trendJS string

// trendSeries is one target's line: each point is [time in ms, median,
// min, max, n], with the run's label and id beside it.
type trendSeries struct {
	Name   string       `json:"name"`
	Points [][5]float64 `json:"points"`
	Labels []string     `json:"labels"`
}

type trendData struct {
	Metric string        `json:"metric"`
	Unit   string        `json:"unit"`
	Series []trendSeries `json:"series"`
}

type trendRow struct {
	Started, Label, URL, Target, Median, Min, Max string
	N                                             int
}

type trendPage struct {
	frame
	Figures               []store.FigureName
	Targets               []string
	Metric, Label, Target string
	Unit, Better          string
	Points                []trendRow
	Data                  template.JS
}

// trend draws one figure (metric=KIND.METRIC) across the runs that
// measured it, over time, a line per target; label and target narrow it.
func (s *Server) trend(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	p := trendPage{frame: s.frame("Trend"), Metric: v.Get("metric"), Label: v.Get("label"), Target: v.Get("target")}
	if _, err := path.Match(p.Label, ""); err != nil {
		s.fail(w, http.StatusBadRequest, "the label %q is not a glob: use * ? and [...] as a shell does, e.g. array-*", p.Label)
		return
	}
	figs, err := s.store.FigureNames(r.Context())
	if err != nil {
		s.internal(w, err)
		return
	}
	p.Figures = figs
	if p.Metric == "" && len(figs) > 0 {
		p.Metric = mostMeasured(figs).Name()
	}
	var fig *store.FigureName
	for i := range figs {
		if figs[i].Name() == p.Metric {
			fig = &figs[i]
		}
	}
	if fig == nil {
		if p.Metric != "" {
			s.fail(w, http.StatusNotFound, "no recorded run measured %s: choose a figure the store holds on the trend page", p.Metric)
			return
		}
		s.render(w, "trend", p)
		return
	}
	p.Unit, p.Better = fig.Unit, fig.Better
	points, err := s.store.FigureTrend(r.Context(), store.TrendQuery{Kind: fig.Kind, Metric: fig.Metric, Label: p.Label})
	if err != nil {
		s.internal(w, err)
		return
	}
	data := trendData{Metric: p.Metric, Unit: p.Unit}
	seen := map[string]int{}
	for _, pt := range points {
		target := pt.Target()
		i, ok := seen[target]
		if !ok {
			i = len(data.Series)
			seen[target] = i
			p.Targets = append(p.Targets, target)
			data.Series = append(data.Series, trendSeries{Name: results.TerminalLine(target)})
		}
		if p.Target != "" && target != p.Target {
			continue
		}
		sr := &data.Series[i]
		sr.Points = append(sr.Points, [5]float64{float64(pt.StartedAt.UnixMilli()), pt.Median, pt.Min, pt.Max, float64(pt.N)})
		sr.Labels = append(sr.Labels, results.TerminalLine(pt.Label))
		p.Points = append(p.Points, trendRow{Started: pt.StartedAt.UTC().Format(time.DateTime), Label: orDash(pt.Label), URL: s.runURL(pt.ID), Target: target,
			Median: number(pt.Median), Min: number(pt.Min), Max: number(pt.Max), N: pt.N})
	}
	kept := data.Series[:0]
	for _, sr := range data.Series {
		if len(sr.Points) > 0 {
			kept = append(kept, sr)
		}
	}
	data.Series = kept
	// encoding/json escapes <, > and &: no label can close the script element.
	b, err := json.Marshal(data)
	if err != nil {
		s.internal(w, err)
		return
	}
	p.Data = template.JS(b)
	s.render(w, "trend", p)
}

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
