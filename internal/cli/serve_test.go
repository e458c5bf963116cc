package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/fault"
)

// serveStore is a store holding the fixture run oltp-base (label "base").
func serveStore(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "store", "r.db")
	run := filepath.Join(t.TempDir(), "oltp-base")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(fixtureRuns, "oltp-base", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	clitest.MustRun(t, 0, "store", "import", "--store", "sqlite:"+db, run)
	return db
}

// Where serve must not listen, and a store it has nothing to show of,
// are refused in one sentence with exit 2.
func TestServeRefuses(t *testing.T) {
	db := serveStore(t)
	store := "sqlite:" + db
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, `--listen "0.0.0.0:0" is not a loopback address, and calibra serve answers this host only; give 127.0.0.1 or [::1]`},
		{[]string{"--listen", ":0"}, "is not a loopback address"},
		{[]string{"--listen", "192.0.2.1:80"}, "or add --allow-remote"},
		{[]string{"--listen", "127.0.0.1"}, `--listen "127.0.0.1" is not HOST:PORT`},
		{[]string{"--listen", "127.0.0.1:0", "--socket", filepath.Join(t.TempDir(), "s")}, "--listen and --socket both say where to serve"},
		{[]string{"--socket", db}, "already exists"},
		{[]string{"--store", "sqlite:" + filepath.Join(t.TempDir(), "none.db")}, "there is no results store at"},
		{[]string{"--store", "none"}, "the results store is off"},
		{[]string{"extra"}, "calibra serve takes no arguments"},
	} {
		args := append([]string{"serve", "--store", store}, c.args...)
		code, stdout, stderr := clitest.Run(t, args...)
		if code != fault.ExitInput || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
			t.Errorf("calibra %s: exit %d, want 2 and one line saying %q:\n%s%s", strings.Join(args, " "), code, c.want, stdout, stderr)
		}
	}
}

// calibra serve prints its URL; without the token the answer is 403,
// with it the run list; on a Unix socket too, whose file goes with it.
// Ctrl-C ends it with exit 0.
func TestServeAnswers(t *testing.T) {
	db := serveStore(t)
	sock := filepath.Join(t.TempDir(), "serve.sock")
	for _, via := range []string{"tcp", "unix"} {
		t.Run(via, func(t *testing.T) {
			args := []string{"serve", "--store", "sqlite:" + db}
			client := http.DefaultClient
			if via == "unix" {
				args = append(args, "--socket", sock)
				client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, "unix", sock)
				}}}
			}
			cmd, _, seen := clitest.StartUntil(t, "calibra serve: http://", args...)
			line := seen[len(seen)-1]
			url, _, _ := strings.Cut(strings.TrimPrefix(line, "calibra serve: "), " ")
			if !strings.HasPrefix(url, "http://") || !strings.Contains(url, "/t/") {
				t.Fatalf("no URL with a token printed:\n%s", strings.Join(seen, "\n"))
			}
			if via == "tcp" && !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Errorf("the URL %s is not on loopback", url)
			}
			if via == "unix" {
				if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o600 {
					t.Errorf("the socket: %v %v, want mode 0600", st.Mode(), err)
				}
			}
			get := func(u string) (int, string) {
				resp, err := client.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(body)
			}
			if code, body := get(url[:strings.Index(url, "/t/")+1]); code != http.StatusForbidden || strings.Contains(body, "base") {
				t.Errorf("without the token: %d, want 403", code)
			}
			if code, body := get(url); code != http.StatusOK || !strings.Contains(body, ">base</a>") {
				t.Errorf("with the token: %d, want 200 and the run list:\n%.500s", code, body)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("calibra serve after Ctrl-C: %v, want exit 0", err)
			}
			if _, err := os.Lstat(sock); via == "unix" && !os.IsNotExist(err) {
				t.Errorf("the socket is left behind: %v", err)
			}
		})
	}
}
