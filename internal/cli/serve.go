package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/live"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/serve"
	"github.com/calibra-bench/calibra/internal/store"
)

func (a *app) serveCommand() *cobra.Command {
	var listen, socket string
	var remote bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a local, read-only web view of the results store: runs, reports, compares, trends",
		Long: `Serve the results store (--store, CALIBRA_STORE; docs/store.md) as web pages,
read-only, until Ctrl-C: the runs (filter by label glob, engine and status,
sort, select), each run's report, a compare of the selected runs (the page
calibra compare --html writes, the oldest run as the base), and any figure's
trend across runs over time, a line per target (host, storage and engine),
each run's repeats as a range, and the runs that regressed against their
baseline (calibra run --baseline).

Every page is rendered by calibra from what the store keeps (each run's
results.json and timeseries.csv, stored when the run is recorded or
imported): serve never opens a run directory, and never sends a page or
script found in one. A run recorded by an older calibra is shown once
calibra store import DIR stores it again.

It listens on loopback only (--listen, default 127.0.0.1 on a free port) and
prints the URL, whose path carries a random token (/t/TOKEN/): every address
serve links to carries it, and nothing else does (no cookie, which any other
program listening on this host would receive). Without it the answer is 403;
a Host header other than the address serve printed is refused (421), and so
is a request another site's page makes. --socket serves on a Unix socket
instead (mode 0600), with the same token. Everything is embedded: the pages
work offline.`,
		Example: `  calibra serve
  calibra serve --store sqlite:/srv/bench/results.db --listen 127.0.0.1:8080
  calibra serve --socket /run/user/1000/calibra.sock`,
		Args: wantArgs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if socket != "" && cmd.Flags().Changed("listen") {
				return fault.Input("give one of them", "--listen and --socket both say where to serve")
			}
			s, ok, err := a.openStore(cmd.Context(), store.ReadOnly)
			if err != nil {
				return err
			}
			if !ok {
				return fault.Input("record a run first (every command that writes a run directory does), or calibra store import RUNDIR...", "there is no results store at %s yet", a.store.Where())
			}
			defer s.Close()
			var ln net.Listener
			if socket != "" {
				ln, err = safefs.ListenUnix(socket)
			} else {
				ln, err = live.ListenTCP(cmd.Context(), "--listen", "calibra serve", listen, remote)
			}
			if err != nil {
				return err
			}
			// The host as --listen names it is a name pages may use too.
			host, _, _ := net.SplitHostPort(listen)
			return a.serveOn(cmd.Context(), s, ln, socket != "", remote, host)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "HOST:PORT to serve on, a loopback address (port 0: a free one)")
	cmd.Flags().StringVar(&socket, "socket", "", "serve on a new Unix socket at this path (mode 0600) instead")
	cmd.Flags().BoolVar(&remote, "allow-remote", false, "let --listen name an address other hosts reach (plain HTTP: the token crosses the network in clear text)")
	return cmd
}

// serveOn serves the store s on ln (a Unix socket when unix) until ctx
// ends, printing the URL with its token.
func (a *app) serveOn(ctx context.Context, s *store.Store, ln net.Listener, unix, remote bool, names ...string) error {
	token, err := serve.NewToken()
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: serve.New(s, token, ln.Addr(), names...), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	path := serve.Path(token)
	if unix {
		fmt.Fprintf(a.stderr, "calibra serve: http://localhost%s on the Unix socket %s (curl --unix-socket %s 'http://localhost%s')\n", path, ln.Addr(), ln.Addr(), path)
	} else {
		fmt.Fprintf(a.stderr, "calibra serve: http://%s%s\n", ln.Addr(), path)
	}
	if remote {
		fmt.Fprintln(a.stderr, "calibra: warning: --allow-remote serves over plain HTTP: the token crosses the network in clear text, so use it only on a network you trust")
	}
	fmt.Fprintf(a.stderr, "serving %s read-only; Ctrl-C stops it\n", s.Where)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
