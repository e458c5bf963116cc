package serve

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// By default the trend's point is a target's day: the two report-a days
// hold two runs each (their median and range), lead-a's day one.
func TestTrendPerDay(t *testing.T) {
	f := newFixture(t)
	var d struct {
		PerDay bool       `json:"per_day"`
		Points []trendRow `json:"points"`
	}
	f.getJSON(t, "/api/trend?metric=oltp.nopm", &d)
	got := map[string][]int{}
	for _, p := range d.Points {
		got[p.Target] = append(got[p.Target], p.N)
	}
	if !d.PerDay || len(got) != 2 || len(got["vm:/var/tmp/report-a postgresql"]) != 2 || got["vm:/var/tmp/report-a postgresql"][0] != 2 || len(got["vm:/var/tmp/calibra postgresql"]) != 1 {
		t.Errorf("the trend a day at a time: %+v, want report-a's two days of two runs and lead-a's day", d)
	}
}

// The list pages through the runs, newest first, and narrows them by
// host, storage and a range of days; each page links the next.
func TestListPages(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		query string
		want  []string // labels, in order
	}{
		{"/?limit=3", []string{"lead-a", "-", "-"}},
		{"/?limit=3&page=2", []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "base", "repeats-b"}},
		{"/?limit=3&page=3", []string{"repeats-a"}},
		{"/?storage=/var/tmp/report-a", []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "base", "repeats-b", "repeats-a"}},
		{"/?host=nohost", nil},
		{"/?since=2026-03-02&until=2026-03-02", []string{"repeats-b", "repeats-a"}},
	} {
		resp, body := f.get(t, c.query, false)
		if got := labels(body); resp.StatusCode != http.StatusOK || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("GET %s: %d, lists %q, want %q", c.query, resp.StatusCode, got, c.want)
		}
	}
	if _, body := f.get(t, "/?limit=3&page=2", false); !strings.Contains(body, `page 2 of 3`) || !strings.Contains(body, `id="prev"`) || !strings.Contains(body, `id="next"`) {
		t.Errorf("page 2 of 3 does not say so or link its neighbours")
	}
	for query, want := range map[string]string{"/?since=yesterday": "is not a day", "/?page=0": "or a page", "/?host=[x": "is not a glob"} {
		if resp, body := f.get(t, query, false); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 400 saying %q", query, resp.StatusCode, want)
		}
	}
}

// Every page's data is JSON at /api/NAME and CSV at /api/NAME.csv, behind
// the token; a CSV cell that a spreadsheet would run as a formula is not
// one, and its control characters are code points.
func TestAPI(t *testing.T) {
	f := newFixture(t)
	for _, api := range []string{"runs", "dashboard", "trend?metric=oltp.nopm", "regressions?all=1", "live?run=" + url.QueryEscape(f.ids["oltp-base"])} {
		resp, body := f.get(t, "/api/"+api, false)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || !json.Valid([]byte(body)) {
			t.Errorf("GET /api/%s: %d %s, valid JSON %v", api, resp.StatusCode, resp.Header.Get("Content-Type"), json.Valid([]byte(body)))
		}
		name, query, _ := strings.Cut(api, "?")
		resp, body = f.get(t, "/api/"+name+".csv?"+query, false)
		rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") || err != nil || len(rows) == 0 {
			t.Errorf("GET /api/%s.csv: %d %q, %d rows (%v)", name, resp.StatusCode, resp.Header.Get("Content-Disposition"), len(rows), err)
		}
		if resp, _ := f.get(t, "/api/"+api, true); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET /api/%s without the token: %d, want 403", api, resp.StatusCode)
		}
	}
	var runs struct {
		Runs    []listRow `json:"runs"`
		Matched int       `json:"matched"`
	}
	f.getJSON(t, "/api/runs?label=repeats-*", &runs)
	if runs.Matched != 2 || len(runs.Runs) != 2 || runs.Runs[0].Label != "repeats-b" {
		t.Errorf("/api/runs?label=repeats-*: %+v", runs)
	}
	// A label a spreadsheet would run: its CSV cell is quoted text.
	dir := copyFixture(t, "oltp-base", func(r *results.Run) { r.Meta.Label = "=HYPERLINK(\"http://x\")\x1b" })
	if _, err := f.store.Record(context.Background(), dir.Path); err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, "/api/runs.csv", false)
	if strings.Contains(body, "\n=HYPERLINK") || strings.Contains(body, ",=HYPERLINK") || strings.Contains(body, "\x1b") || !strings.Contains(body, `'=HYPERLINK`) {
		t.Errorf("the CSV carries the formula or the escape raw:\n%s", body)
	}
}

func (f *fixture) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, body := f.get(t, path, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// copyFixture writes the fixture run name, changed by edit, to a new run
// directory.
func copyFixture(t *testing.T, name string, edit func(*results.Run)) *results.Dir {
	t.Helper()
	r, err := results.Load(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	edit(r)
	dir, err := results.Create(filepath.Join(t.TempDir(), name), r)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// The dashboard shows a card for each target with its newest run and its
// verdict, and the runs running now first.
func TestDashboard(t *testing.T) {
	f := newFixture(t)
	var d struct {
		Targets []targetCard `json:"targets"`
	}
	f.getJSON(t, "/api/dashboard", &d)
	cards := map[string]targetCard{}
	for _, c := range d.Targets {
		cards[c.Target] = c
	}
	if c := cards["vm:/var/tmp/report-a postgresql"]; c.Latest.Label != "<script>alert(1)</script>" || c.Figure != "oltp.nopm" || c.Verdict != "not judged" || len(c.Days) == 0 {
		t.Errorf("report-a's card: %+v, want its newest run, its NOPM a day at a time and no verdict", c)
	}
	if len(cards) < 3 {
		t.Errorf("the dashboard has %d targets: %v", len(cards), d.Targets)
	}
}

// A run that records itself as it starts is listed first as running, with
// its live page; its heartbeat gone StaleAfter, it shows as stopped
// without a finish; recorded as it ended, its live page says how.
func TestLive(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dir := copyFixture(t, "oltp-base", func(r *results.Run) {
		r.Meta.Label, r.StartedAt, r.Steps, r.Status, r.FinishedAt = "now-running", time.Now().UTC(), nil, "", nil
	})
	l, err := f.store.Follow(ctx, dir.Path)
	if err != nil {
		t.Fatal(err)
	}
	l.Phase("oltp run: measuring")
	l.Second(time.Now(), []string{"oltp_phase", "oltp_tpm_client"}, []string{"measure", "4200.0"})
	var live liveData
	for deadline := time.Now().Add(10 * time.Second); len(live.Seconds) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		f.getJSON(t, "/api/live?run="+url.QueryEscape(l.ID), &live)
	}
	if live.Status != results.StatusRunning || live.Phase != "oltp run: measuring" || len(live.Seconds) != 1 || live.Seconds[0].Figures["oltp_tpm_client"] != 4200.0 {
		t.Errorf("the live data: %+v, want running, its phase and its second", live)
	}
	_, body := f.get(t, "/", false)
	if !strings.Contains(body, `<h2>Running now</h2>`) || !strings.Contains(body, "/live?run="+url.QueryEscape(l.ID)) {
		t.Errorf("the list does not show the run running first, with its live page")
	}
	f.handler().now = func() time.Time { return time.Now().Add(store.StaleAfter + time.Minute) }
	f.getJSON(t, "/api/live?run="+url.QueryEscape(l.ID), &live)
	if _, body := f.get(t, "/", false); live.Status != statusStopped || !strings.Contains(body, "stopped without a finish") {
		t.Errorf("a run whose heartbeat stopped: %s, and the list does not say it stopped without a finish", live.Status)
	}
	f.handler().now = time.Now
	if err := dir.Finish(results.StatusComplete, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Record(ctx, dir.Path); err != nil {
		t.Fatal(err)
	}
	if err := l.End(ctx, false); err != nil {
		t.Fatal(err)
	}
	f.getJSON(t, "/api/live?run="+url.QueryEscape(l.ID), &live)
	if live.Status != results.StatusComplete || len(live.Seconds) != 0 {
		t.Errorf("the finished run's live data: %+v, want complete", live)
	}
}

// handler is the fixture's server.
func (f *fixture) handler() *Server { return f.srv.Config.Handler.(*Server) }
