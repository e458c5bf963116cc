package serve

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run's page is calibra's report rendered from the store's copy of its
// results, never the report.html (or any file) of its directory, which
// serve does not open: the directory changed, or gone, changes nothing.
// results.json and timeseries.csv are downloads; every other name is
// refused; a run recorded by an older calibra says how to store it.
func TestRunFiles(t *testing.T) {
	f := newFixture(t)
	dir := f.dirs["oltp-base"]
	run := "/runs/" + url.PathEscape(f.ids["oltp-base"]) + "/"
	ts, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
	if err != nil {
		t.Fatal(err)
	}
	const planted = "<script>planted()</script>"
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("the secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join(fixtures, "quick", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, run, false)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<meta name="generator" content="calibra">`) || !strings.Contains(body, "base") || strings.Contains(body, "planted()") {
		t.Fatalf("GET %s: %d, want calibra's report of oltp-base:\n%.300s", run, resp.StatusCode, body)
	}
	if ct, csp := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"); ct != "text/html; charset=utf-8" || !strings.HasPrefix(csp, "sandbox allow-scripts;") || strings.Contains(csp, "unsafe") {
		t.Errorf("the report served as %q with the policy %q", ct, csp)
	}
	for name, want := range map[string]string{"results.json": `"label": "base"`, "timeseries.csv": string(ts)} {
		resp, body := f.get(t, run+name, false)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			resp.Header.Get("Content-Disposition") != `attachment; filename="`+name+`"` || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %q %q", name, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
		}
	}
	for _, path := range []string{run + "report.html", run + "secret.txt", run + "logs/calibra.log", run + "..%2Fsecret.txt", run + "%2E%2E/secret.txt",
		"/runs/" + url.PathEscape(f.ids["oltp-base"]) + "%2F..%2Fsecret.txt/", "/runs/nosuchrun/"} {
		resp, body := f.get(t, path, false)
		if resp.StatusCode != http.StatusNotFound || strings.Contains(body, "the secret") || strings.Contains(body, "planted()") {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.get(t, run, false); resp.StatusCode != http.StatusOK {
		t.Errorf("the report of a run whose directory is gone: %d, want 200", resp.StatusCode)
	}

	db, err := sql.Open("sqlite", f.store.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET results_gz = NULL, timeseries_gz = NULL WHERE id = ?`, f.ids["quick"]); err != nil {
		t.Fatal(err)
	}
	old := "/runs/" + url.PathEscape(f.ids["quick"]) + "/"
	if resp, body := f.get(t, old, false); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "was recorded by an older calibra") || !strings.Contains(body, "calibra store import "+f.dirs["quick"]) {
		t.Errorf("a run recorded without its results: %d\n%.300s", resp.StatusCode, body)
	}
}

// Two selected runs open compare's page, the oldest as the base; one run,
// or runs with no step in common, are refused in a sentence.
func TestCompare(t *testing.T) {
	f := newFixture(t)
	q := "/compare?run=" + url.QueryEscape(f.ids["oltp-base"]) + "&run=" + url.QueryEscape(f.ids["repeats-a"])
	resp, body := f.get(t, q, false)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>calibra compare</h1>") {
		t.Fatalf("GET %s: %d\n%.300s", q, resp.StatusCode, body)
	}
	if !strings.Contains(body, "Base: <b>repeats-a</b>") {
		t.Errorf("the base is not the oldest run (repeats-a)")
	}
	for q, want := range map[string]int{
		"/compare?run=" + url.QueryEscape(f.ids["oltp-base"]):                                                 http.StatusBadRequest,
		"/compare?run=" + url.QueryEscape(f.ids["oltp-base"]) + "&run=" + url.QueryEscape(f.ids["oltp-base"]): http.StatusBadRequest,
		"/compare?run=" + url.QueryEscape(f.ids["device-a"]) + "&run=" + url.QueryEscape(f.ids["repeats-a"]):  http.StatusUnprocessableEntity,
		"/compare?run=" + url.QueryEscape(f.ids["oltp-base"]) + "&run=nosuchrun":                              http.StatusNotFound,
	} {
		if resp, _ := f.get(t, q, false); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", q, resp.StatusCode, want)
		}
	}
}

// The trend of oltp.nopm holds one point per run that measured it, a line
// per target, each repeated run with its median and range.
func TestTrend(t *testing.T) {
	f := newFixture(t)
	resp, body := f.get(t, "/trend?metric=oltp.nopm&per=run", false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /trend: %d\n%.300s", resp.StatusCode, body)
	}
	_, data, _ := strings.Cut(body, `<script type="application/json" id="trend-data">`)
	data, _, _ = strings.Cut(data, "</script>")
	var d trendData
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		t.Fatalf("the trend's data: %v\n%s", err, data)
	}
	got := map[string][]string{}
	for _, s := range d.Series {
		got[s.Name] = s.Labels
		for i, p := range s.Points {
			if s.Labels[i] == "repeats-a" && (p[1] != 1010 || p[2] != 980 || p[3] != 1040 || p[4] != 5) {
				t.Errorf("repeats-a: median, min, max, n = %v, want 1010, 980, 1040, 5", p[1:])
			}
		}
	}
	want := map[string][]string{"vm:/var/tmp/report-a postgresql": {"repeats-a", "repeats-b", "base", "<script>alert(1)</script>"}, "vm:/var/tmp/calibra postgresql": {"lead-a"}}
	if len(got) != len(want) || strings.Join(got["vm:/var/tmp/report-a postgresql"], "|") != strings.Join(want["vm:/var/tmp/report-a postgresql"], "|") ||
		strings.Join(got["vm:/var/tmp/calibra postgresql"], "|") != "lead-a" {
		t.Errorf("the trend's lines: %q, want %q", got, want)
	}
	if _, body := f.get(t, "/trend?metric=oltp.nopm&per=run&label=repeats-*&target=vm:/var/tmp/report-a+postgresql", false); strings.Count(body, "<tr><td>2026") != 2 {
		t.Errorf("label and target narrow the trend to repeats-a and repeats-b:\n%s", body)
	}
	if resp, _ := f.get(t, "/trend?metric=oltp.nothing", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a figure no run measured: %d, want 404", resp.StatusCode)
	}
}

// The regressions page lists the runs calibra run --baseline found
// regressed (the verdict rows it records), with the figures judged and
// the runs its baseline took (each a link to its report), and says so
// when there is none.
func TestRegressions(t *testing.T) {
	f := newFixture(t)
	if _, body := f.get(t, "/regressions", false); !strings.Contains(body, "No recorded run regressed against its baseline.") {
		t.Errorf("a store without verdicts:\n%s", body)
	}
	db, err := sql.Open("sqlite", f.store.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, v := range []struct {
		id, kind, verdict, detail string
		ok, value                 any
	}{
		{f.ids["oltp-xss"], "baseline", "regressed", "against last (3 runs): oltp.nopm regressed", false, nil},
		{f.ids["oltp-xss"], "baseline_figure", "regressed", "oltp.nopm: median 900 against 1000", false, -10.0},
		{f.ids["oltp-base"], "baseline", "pass", "against last (3 runs)", true, nil},
	} {
		if _, err := db.Exec(`INSERT INTO verdicts (run_id, step, kind, verdict, ok, value, detail) VALUES (?, 'oltp/oltp', ?, ?, ?, ?, ?)`,
			v.id, v.kind, v.verdict, v.ok, v.value, v.detail); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`INSERT INTO baseline_runs (run_id, position, base_id) VALUES (?, 0, ?)`, f.ids["oltp-xss"], f.ids["oltp-base"]); err != nil {
		t.Fatal(err)
	}
	_, body := f.get(t, "/regressions", false)
	baseLink := `Its baseline: <a href="` + base + `/runs/` + url.PathEscape(f.ids["oltp-base"]) + `/">`
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "oltp.nopm: median 900 against 1000", `<td class="bad">-10.0%</td>`, baseLink} {
		if !strings.Contains(body, want) {
			t.Errorf("the regressions page does not show %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, ">base</a>") {
		t.Errorf("a run that passed is listed among the regressions")
	}
	if _, body := f.get(t, "/regressions?all=1", false); !strings.Contains(body, ">base</a>") {
		t.Errorf("every verdict does not list the run that passed")
	}
}
