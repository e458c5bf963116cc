package live

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// What the endpoint refuses to start with: each an input error (exit 2)
// in one sentence, before it listens anywhere.
func TestStartRefuses(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	open := filepath.Join(dir, "open")
	empty := filepath.Join(dir, "empty")
	for path, mode := range map[string]os.FileMode{token: 0o600, open: 0o644, empty: 0o600} {
		data := "s3cret\n"
		if path == empty {
			data = "\n"
		}
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		o    Options
		says string
	}{
		{"every interface", Options{Listen: ":0"}, "not a loopback address"},
		{"another host's address", Options{Listen: "192.0.2.1:9464"}, "not a loopback address"},
		{"not HOST:PORT", Options{Listen: "127.0.0.1"}, "not HOST:PORT"},
		{"remote without a token", Options{Listen: "0.0.0.0:0", AllowRemote: true}, "needs a bearer token"},
		{"a token others can read", Options{Listen: "127.0.0.1:0", TokenFile: open}, "can be read by other accounts"},
		{"an empty token", Options{Listen: "127.0.0.1:0", TokenFile: empty}, "holds no token"},
		{"no token file", Options{Listen: "127.0.0.1:0", TokenFile: filepath.Join(dir, "absent")}, "absent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Start(context.Background(), tc.o, NewBoard())
			if err == nil {
				e.Close(false)
				t.Fatal("started")
			}
			var in *fault.InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q (input error: %v), want one saying %q", err, errors.As(err, &in), tc.says)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error quotes the token: %q", err)
			}
		})
	}
}

// Who gets the figures: only /metrics, only by GET, only under the
// address the endpoint listens on (DNS rebinding), and with a token only
// to its bearer, as Prometheus' credentials_file sends it.
func TestEndpointAnswers(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plain, err := Start(context.Background(), Options{Listen: "127.0.0.1:0"}, NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(false)
	guarded, err := Start(context.Background(), Options{Listen: "127.0.0.1:0", TokenFile: tokenFile}, NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Close(false)
	tests := []struct {
		name         string
		e            *Endpoint
		method, path string
		host, auth   string
		want         int
	}{
		{"metrics", plain, "GET", "/metrics", "", "", 200},
		{"head", plain, "HEAD", "/metrics", "", "", 200},
		{"localhost", plain, "GET", "/metrics", "localhost:" + port(plain), "", 200},
		{"another path", plain, "GET", "/", "", "", 404},
		{"a post", plain, "POST", "/metrics", "", "", 405},
		{"a rebound name", plain, "GET", "/metrics", "attacker.invalid:" + port(plain), "", 421},
		{"no token", guarded, "GET", "/metrics", "", "", 401},
		{"a wrong token", guarded, "GET", "/metrics", "", "Bearer s3cre", 401},
		{"the token another way", guarded, "GET", "/metrics", "", "Basic s3cret", 401},
		{"the token", guarded, "GET", "/metrics", "", "Bearer s3cret", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://"+tc.e.Addr()+tc.path, nil)
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
			}
			if len(resp.Cookies()) > 0 {
				t.Errorf("sets a cookie: %v", resp.Cookies())
			}
		})
	}
}

func port(e *Endpoint) string { return e.Addr()[strings.LastIndex(e.Addr(), ":")+1:] }

// A scraper that has been scraping reads the run's last figures: Close
// waits for a scrape that started after them before it stops serving.
func TestCloseServesTheLastFigures(t *testing.T) {
	b := NewBoard()
	b.Step("oltp run")
	e, err := Start(context.Background(), Options{Listen: "127.0.0.1:0"}, b)
	if err != nil {
		t.Fatal(err)
	}
	get := func() (string, error) {
		resp, err := http.Get("http://" + e.Addr() + "/metrics")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	if _, err := get(); err != nil {
		t.Fatal(err)
	}
	b.Step("finished")
	closed := make(chan error, 1)
	go func() { closed <- e.Close(true) }()
	var last string
	for {
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(last, `step="finished"`) {
				t.Errorf("the last scrape before Close returned did not hold the final figures:\n%s", last)
			}
			return
		default:
		}
		if body, err := get(); err == nil {
			last = body
		}
	}
}
