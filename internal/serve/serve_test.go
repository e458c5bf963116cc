package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/store"
)

const fixtures = "../results/testdata/runs"

// fixtureNames are the runs of the test store: two repeated OLTP runs
// (repeats-*), two single ones (base and the hostile label
// <script>alert(1)</script>), a quick study (lead-a) and two device runs.
var fixtureNames = []string{"repeats-a", "repeats-b", "oltp-base", "oltp-xss", "quick", "device-a", "device-b"}

const testToken = "test-token-0123456789"

// fixture is a store of copies of the fixture runs, each with its
// report.html, and a server of it.
type fixture struct {
	store *store.Store
	dirs  map[string]string // fixture name -> run directory
	ids   map[string]string // fixture name -> run id
	srv   *httptest.Server
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	tmp := t.TempDir()
	f := &fixture{dirs: map[string]string{}, ids: map[string]string{}}
	var dirs []string
	for _, name := range fixtureNames {
		dir := filepath.Join(tmp, "runs", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{"results.json", "timeseries.csv"} {
			data, err := os.ReadFile(filepath.Join(fixtures, name, file))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := report.Write(dir); err != nil {
			t.Fatal(err)
		}
		f.dirs[name] = dir
		dirs = append(dirs, dir)
	}
	st, err := store.Open(context.Background(), filepath.Join(tmp, "store", "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ids, err := st.Import(context.Background(), dirs)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range fixtureNames {
		f.ids[name] = ids[i]
	}
	f.store = st
	f.srv = httptest.NewUnstartedServer(nil)
	f.srv.Config.Handler = New(st, testToken, f.srv.Listener.Addr())
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// base is the path before every address serve makes: the token's.
const base = "/t/" + testToken

// get fetches path (below the token's unless noToken) and returns the
// status and body.
func (f *fixture) get(t *testing.T, path string, noToken bool) (*http.Response, string) {
	t.Helper()
	if !noToken {
		path = base + path
	}
	req, err := http.NewRequest("GET", f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

// Without the token every page is refused (403), with a wrong one too,
// and in the query, where serve no longer takes it; no answer sets a
// cookie (every port of the host would receive it); a write method is
// refused.
func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/", "/trend", "/runs/" + f.ids["oltp-base"] + "/", "/static/echarts.min.js", "/?token=" + testToken,
		"/t/wrong/", "/t/" + testToken[:len(testToken)-1] + "/", "/t/" + testToken + "x/", "/t//", "/nothing"} {
		resp, body := f.get(t, path, true)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", path, resp.StatusCode)
		}
		if strings.Contains(body, "repeats-a") {
			t.Errorf("GET %s without the token shows the runs", path)
		}
	}
	for _, path := range []string{"/", "/trend", "/regressions", "/runs/" + url.PathEscape(f.ids["oltp-base"]) + "/", "/static/serve.css"} {
		resp, _ := f.get(t, path, false)
		if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 {
			t.Errorf("GET %s with the token: %d, cookies %v; want 200 and none", path, resp.StatusCode, resp.Cookies())
		}
	}
	if resp, _ := f.get(t, "/t/"+testToken, true); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != base+"/" {
		t.Errorf("GET the token's path without its slash: %d at %s, want the run list", resp.StatusCode, resp.Request.URL.Path)
	}
	resp, err := http.Post(f.srv.URL+base+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST with the token: %d, want 405", resp.StatusCode)
	}
}

// Only the address serve listens on is answered (DNS rebinding names it
// otherwise), and only its own pages or a URL typed or clicked, never
// another site's page: another port of this host is another site.
func TestRequestOrigin(t *testing.T) {
	f := newFixture(t)
	port := f.srv.Listener.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		host, site, origin string
		want               int
	}{
		{"", "", "", http.StatusOK},
		{"localhost:" + strconv.Itoa(port), "", "", http.StatusOK},
		{"LocalHost:" + strconv.Itoa(port), "none", "", http.StatusOK},
		{"", "same-origin", f.srv.URL, http.StatusOK},
		{"attacker.example", "", "", http.StatusMisdirectedRequest},
		{"attacker.example:" + strconv.Itoa(port), "", "", http.StatusMisdirectedRequest},
		{"127.0.0.1", "", "", http.StatusMisdirectedRequest},
		{"127.0.0.1:" + strconv.Itoa(port+1), "", "", http.StatusMisdirectedRequest},
		{"", "cross-site", "", http.StatusForbidden},
		{"", "same-site", "", http.StatusForbidden},
		{"", "", "http://127.0.0.1:" + strconv.Itoa(port+1), http.StatusForbidden},
		{"", "", "null", http.StatusForbidden},
	} {
		req, err := http.NewRequest("GET", f.srv.URL+base+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.host != "" {
			req.Host = c.host
		}
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, body := do(t, req)
		if resp.StatusCode != c.want || c.want != http.StatusOK && strings.Contains(body, "repeats-a") {
			t.Errorf("Host %q, Sec-Fetch-Site %q, Origin %q: %d, want %d", c.host, c.site, c.origin, resp.StatusCode, c.want)
		}
	}
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The list shows every run, filters by label glob, engine and status,
// sorts by a column, and refuses a label that is no glob.
func TestList(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		query string
		want  []string // labels, in order
	}{
		{"/", []string{"lead-a", "-", "-", "&lt;script&gt;alert(1)&lt;/script&gt;", "base", "repeats-b", "repeats-a"}},
		{"/?label=repeats-*", []string{"repeats-b", "repeats-a"}},
		{"/?label=repeats-*&sort=label", []string{"repeats-a", "repeats-b"}},
		{"/?engine=postgresql&sort=-figures", []string{"lead-a", "repeats-b", "repeats-a", "base", "&lt;script&gt;alert(1)&lt;/script&gt;"}},
		{"/?status=failed", nil},
		{"/?limit=2", []string{"lead-a", "-"}},
	} {
		resp, body := f.get(t, c.query, false)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", c.query, resp.StatusCode)
			continue
		}
		if got := labels(body); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("GET %s lists %q, want %q", c.query, got, c.want)
		}
	}
	if _, body := f.get(t, "/?limit=2", false); !strings.Contains(body, "show all 7") {
		t.Errorf("a limited list offers no way to all the runs")
	}
	for query, want := range map[string]string{"/?label=[x": "is not a glob", "/?sort=color": "names no column", "/?limit=-1": "is not a number of runs"} {
		resp, body := f.get(t, query, false)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 400 saying %q", query, resp.StatusCode, want)
		}
	}
}

// labels reads the run list's labels, in order.
func labels(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, `<tr><td><input type="checkbox"`) {
			continue
		}
		_, rest, _ := strings.Cut(line, `<td><a href="`+base+`/runs/`)
		_, rest, _ = strings.Cut(rest, `">`)
		label, _, _ := strings.Cut(rest, "</a>")
		out = append(out, label)
	}
	return out
}

// A hostile label is text on every page: escaped in HTML, and in the
// trend's data only as JSON escapes.
func TestHostileLabelEscaped(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/", "/trend?metric=oltp.nopm&per=run"} {
		_, body := f.get(t, path, false)
		if strings.Contains(body, "<script>alert(1)") {
			t.Errorf("GET %s carries the label as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s does not show the label as text", path)
		}
	}
	_, body := f.get(t, "/trend?metric=oltp.nopm&per=run", false)
	if !strings.Contains(body, `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
		t.Errorf("the trend's data does not carry the label JSON-escaped")
	}
}
