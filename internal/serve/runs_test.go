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

// A run's page is its report.html as written, sandboxed; its other files
// are text; nothing outside a recorded run directory is served: not by
// "..", not through a link, not a directory, not a run the store lacks,
// and not a directory that now holds another run.
func TestRunFiles(t *testing.T) {
	f := newFixture(t)
	base := "/runs/" + url.PathEscape(f.ids["oltp-base"]) + "/"
	want, err := os.ReadFile(filepath.Join(f.dirs["oltp-base"], "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	resp, body := f.get(t, base, false)
	if resp.StatusCode != http.StatusOK || body != string(want) {
		t.Fatalf("GET %s: %d, %d bytes; want report.html as is (%d bytes)", base, resp.StatusCode, len(body), len(want))
	}
	if ct, csp := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Security-Policy"); ct != "text/html; charset=utf-8" || !strings.HasPrefix(csp, "sandbox allow-scripts;") {
		t.Errorf("report.html served as %q with the policy %q", ct, csp)
	}
	if resp, body := f.get(t, base+"results.json", false); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.Contains(body, `"schema"`) {
		t.Errorf("GET results.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	// Outside the run directory: the store's file, a secret beside it.
	secret := filepath.Join(filepath.Dir(f.dirs["oltp-base"]), "secret.txt")
	if err := os.WriteFile(secret, []byte("the secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(f.dirs["oltp-base"], "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(f.dirs["oltp-base"], "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dirs["oltp-base"], "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		base + "..%2Fsecret.txt", base + "%2E%2E/secret.txt", base + "up/secret.txt", base + "link.txt", base + "sub",
		"/runs/" + url.PathEscape(f.ids["oltp-base"]) + "%2F..%2F..%2Fsecret.txt/", "/runs/..%2Fsecret.txt/",
	} {
		resp, body := f.get(t, path, false)
		if resp.StatusCode == http.StatusOK || strings.Contains(body, "the secret") {
			t.Errorf("GET %s: %d, want a refusal", path, resp.StatusCode)
		}
	}
	// Raw "..": the client would clean it; send it as is.
	req, _ := http.NewRequest("GET", f.srv.URL+"/", nil)
	req.URL.Opaque = base + "../../secret.txt"
	req.URL.RawQuery = TokenParam + "=" + testToken
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("GET %s: 200", req.URL.Opaque)
	}

	if resp, _ := f.get(t, "/runs/nosuchrun/", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a run the store lacks: %d, want 404", resp.StatusCode)
	}
	// The directory now holds another run: refused, not served.
	other, err := os.ReadFile(filepath.Join(fixtures, "quick", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dirs["oltp-base"], "results.json"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, body := f.get(t, base, false); resp.StatusCode != http.StatusGone || !strings.Contains(body, "now holds another run") {
		t.Errorf("a directory that holds another run now: %d\n%.300s", resp.StatusCode, body)
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
	resp, body := f.get(t, "/trend?metric=oltp.nopm", false)
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
	if _, body := f.get(t, "/trend?metric=oltp.nopm&label=repeats-*&target=vm:/var/tmp/report-a+postgresql", false); strings.Count(body, "<tr><td>2026") != 2 {
		t.Errorf("label and target narrow the trend to repeats-a and repeats-b:\n%s", body)
	}
	if resp, _ := f.get(t, "/trend?metric=oltp.nothing", false); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a figure no run measured: %d, want 404", resp.StatusCode)
	}
}

// The regressions page lists the runs calibra run --baseline found
// regressed (the verdict rows it records), with the figures judged, and
// says so when there is none.
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
	_, body := f.get(t, "/regressions", false)
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "oltp.nopm: median 900 against 1000", `<td class="bad">-10.0%</td>`} {
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
