package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	f.srv = httptest.NewServer(New(st, testToken))
	t.Cleanup(f.srv.Close)
	return f
}

// get fetches path (with the token unless noToken) and returns the status
// and body.
func (f *fixture) get(t *testing.T, path string, noToken bool) (*http.Response, string) {
	t.Helper()
	if !noToken {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + TokenParam + "=" + testToken
	}
	return fetch(t, http.DefaultClient, f.srv.URL+path)
}

func fetch(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
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

// Without the token every page is refused (403), with a wrong one too;
// the token in the URL sets a cookie that then suffices; a write method
// is refused.
func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/", "/trend", "/runs/" + f.ids["oltp-base"] + "/", "/static/echarts.min.js", "/?token=wrong", "/nothing"} {
		resp, body := f.get(t, path, true)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s without the token: %d, want 403", path, resp.StatusCode)
		}
		if strings.Contains(body, "repeats-a") {
			t.Errorf("GET %s without the token shows the runs", path)
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, body := fetch(t, c, f.srv.URL+"/?"+TokenParam+"="+testToken)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "repeats-a") {
		t.Fatalf("GET / with the token: %d\n%.300s", resp.StatusCode, body)
	}
	if resp, _ := fetch(t, c, f.srv.URL+"/trend"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /trend with the cookie alone: %d, want 200", resp.StatusCode)
	}
	resp, err := http.Post(f.srv.URL+"/?"+TokenParam+"="+testToken, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST with the token: %d, want 405", resp.StatusCode)
	}
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
		_, rest, _ := strings.Cut(line, `<td><a href="/runs/`)
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
	for _, path := range []string{"/", "/trend?metric=oltp.nopm"} {
		_, body := f.get(t, path, false)
		if strings.Contains(body, "<script>alert(1)") {
			t.Errorf("GET %s carries the label as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("GET %s does not show the label as text", path)
		}
	}
	_, body := f.get(t, "/trend?metric=oltp.nopm", false)
	if !strings.Contains(body, `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
		t.Errorf("the trend's data does not carry the label JSON-escaped")
	}
}
