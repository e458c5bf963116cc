package serve

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// SparkDays is how many days before a target's newest run its small
// trend covers.
const SparkDays = 30

// targetCard is one target on the dashboard: its newest run, that run's
// verdict against its baseline, and its headline figure's small trend.
type targetCard struct {
	Target        string  `json:"target"`
	Latest        listRow `json:"latest"`
	Verdict       string  `json:"verdict"`
	VerdictDetail string  `json:"verdict_detail"`
	VerdictClass  string  `json:"-"`
	Figure        string  `json:"figure"`
	Value         string  `json:"value"`
	// Days are the figure's daily medians over the trend, oldest first.
	Days     []dayValue  `json:"days"`
	Spark    string      `json:"-"` // an SVG polyline's points
	Marks    []sparkMark `json:"-"`
	TrendURL string      `json:"trend_url"`
	RunsURL  string      `json:"runs_url"`
}

type dayValue struct {
	Day       string  `json:"day"`
	Median    float64 `json:"median"`
	Runs      int     `json:"runs"`
	Regressed int     `json:"regressed"`
}

// sparkMark is a day of the small trend with a regressed run: a red dot.
type sparkMark struct{ X, Y string }

type dashboardPage struct {
	frame
	Running         []listRow
	Targets         []targetCard
	SparkDays       int
	JSONURL, CSVURL string
}

// dashboardView is serve's daily view: the runs running now, then each
// target (host, storage, engine) with its newest run, that run's verdict
// against its baseline and its headline figure over the last SparkDays
// days, a day at a time.
func (s *Server) dashboardView(r *http.Request) (view, error) {
	ctx := r.Context()
	p := dashboardPage{frame: s.frame("Dashboard"), SparkDays: SparkDays, JSONURL: s.apiURL("dashboard", r), CSVURL: s.apiURL("dashboard.csv", r)}
	latest, err := s.store.Latest(ctx)
	if err != nil {
		return view{}, err
	}
	states, err := s.store.LiveStates(ctx)
	if err != nil {
		return view{}, err
	}
	running, err := s.store.History(ctx, store.Query{Status: results.StatusRunning})
	if err != nil {
		return view{}, err
	}
	p.Running = s.listRows(running, states)
	regressed, err := s.store.Regressed(ctx)
	if err != nil {
		return view{}, err
	}
	// One query a figure, from the earliest day any target's trend needs.
	since := map[string]time.Time{}
	for _, l := range latest {
		if len(l.Headline) > 0 {
			name, from := l.Headline[0].Name, l.StartedAt.AddDate(0, 0, -SparkDays)
			if t, ok := since[name]; !ok || from.Before(t) {
				since[name] = from
			}
		}
	}
	days := map[string][]store.DayPoint{} // by figure
	for name, from := range since {
		kind, metric, _ := strings.Cut(name, ".")
		points, err := s.store.FigureTrend(ctx, store.TrendQuery{Kind: kind, Metric: metric, Since: from})
		if err != nil {
			return view{}, err
		}
		days[name] = store.PerDay(points, regressed)
	}
	table := [][]string{{"target", "latest run", "started", "status", "verdict", "figure", "value", "verdict detail"}}
	for _, l := range latest {
		row := s.listRows([]store.Row{l.Row}, states)[0]
		target := store.TrendPoint{Host: l.Host, Storage: l.Storage, Device: l.Device, Engine: l.Engine}.Target()
		c := targetCard{Target: target, Latest: row, Verdict: l.Verdict, VerdictDetail: l.VerdictDetail,
			RunsURL: s.base + "/?" + url.Values{"host": {l.Host}, "storage": {row.Storage}, "engine": {l.Engine}}.Encode()}
		switch l.Verdict {
		case results.BaselineRegressed:
			c.VerdictClass = "failed"
		case results.BaselinePass:
			c.VerdictClass = "complete"
		case "":
			c.Verdict = "not judged"
			c.VerdictDetail = "the run was not judged against a baseline: calibra run --baseline last judges each run against the target's earlier ones"
		}
		if len(l.Headline) > 0 {
			h := l.Headline[0]
			c.Figure, c.Value = h.Name, strings.TrimSpace(number(h.Value.Value)+" "+h.Unit)
			c.TrendURL = s.base + "/trend?" + url.Values{"metric": {h.Name}, "target": {target}}.Encode()
			from := l.StartedAt.AddDate(0, 0, -SparkDays)
			for _, d := range days[h.Name] {
				if d.Target == target && !d.Day.Before(from.Truncate(24*time.Hour)) {
					c.Days = append(c.Days, dayValue{Day: d.Day.Format(day), Median: d.Median, Runs: d.Runs, Regressed: d.Regressed})
				}
			}
			c.Spark, c.Marks = spark(c.Days)
		}
		p.Targets = append(p.Targets, c)
		table = append(table, []string{target, row.Label, row.Started, row.Status, c.Verdict, c.Figure, c.Value, c.VerdictDetail})
	}
	return view{name: "dashboard", page: p, data: map[string]any{"running": p.Running, "targets": p.Targets}, table: table}, nil
}

// Sparkline's box, in SVG units.
const sparkW, sparkH = 200.0, 40.0

// spark draws the daily medians as an SVG polyline's points in a
// sparkW by sparkH box, and marks the days with a regressed run.
func spark(days []dayValue) (string, []sparkMark) {
	if len(days) == 0 {
		return "", nil
	}
	lo, hi := days[0].Median, days[0].Median
	for _, d := range days {
		lo, hi = min(lo, d.Median), max(hi, d.Median)
	}
	var pts []string
	var marks []sparkMark
	for i, d := range days {
		x := sparkW / 2
		if len(days) > 1 {
			x = sparkW * float64(i) / float64(len(days)-1)
		}
		y := sparkH / 2
		if hi > lo {
			y = 2 + (sparkH-4)*(hi-d.Median)/(hi-lo)
		}
		xs, ys := strconv.FormatFloat(x, 'f', 1, 64), strconv.FormatFloat(y, 'f', 1, 64)
		pts = append(pts, xs+","+ys)
		if d.Regressed > 0 {
			marks = append(marks, sparkMark{xs, ys})
		}
	}
	// Numbers and commas only: nothing of the store's text.
	return strings.Join(pts, " "), marks
}
