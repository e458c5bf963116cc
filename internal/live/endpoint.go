package live

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Options are --metrics-listen and its protections.
type Options struct {
	Listen string // HOST:PORT; "" exports nothing
	// AllowRemote lets Listen name an address other hosts reach; TokenFile
	// is then required.
	AllowRemote bool
	// TokenFile holds the bearer token every request must carry (as
	// Prometheus' authorization.credentials_file sends it); mode 0600.
	TokenFile string
}

// LastScrapeWait bounds how long Close waits for a scraper that has been
// scraping to read the run's final figures.
const LastScrapeWait = 5 * time.Second

// Endpoint serves a Board at /metrics.
type Endpoint struct {
	srv      *http.Server
	ln       net.Listener
	done     chan error
	scrapes  atomic.Int64
	scraped  chan struct{} // a scrape that started after finalize ended
	finalize atomic.Bool   // the run's figures are final
}

// Start listens as o asks and serves b until Close. A bad address or token
// is an input error, found before anything runs.
func Start(ctx context.Context, o Options, b *Board) (*Endpoint, error) {
	if o.AllowRemote && o.TokenFile == "" {
		return nil, fault.Input("write a token to a file only you can read (chmod 600) and give it with --metrics-token-file; Prometheus sends it from authorization.credentials_file",
			"--allow-remote lets other hosts reach --metrics-listen %s, and needs a bearer token", o.Listen)
	}
	var token []byte
	if o.TokenFile != "" {
		var err error
		if token, err = readToken(ctx, o.TokenFile); err != nil {
			return nil, err
		}
	}
	ln, err := ListenTCP(ctx, "--metrics-listen", "the metrics endpoint", o.Listen, o.AllowRemote)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(b); err != nil {
		ln.Close()
		return nil, err
	}
	e := &Endpoint{ln: ln, done: make(chan error, 1), scraped: make(chan struct{}, 1)}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.HTTPErrorOnError})
	e.srv = &http.Server{Handler: e.guard(ln.Addr().(*net.TCPAddr), o.AllowRemote, token, metrics),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() { e.done <- e.srv.Serve(ln) }()
	return e, nil
}

// Addr is the address the endpoint listens on.
func (e *Endpoint) Addr() string { return e.ln.Addr().String() }

// Close stops serving. When final and someone has scraped, it first waits
// (at most LastScrapeWait) for one more scrape, so the run's last figures
// reach the scraper.
func (e *Endpoint) Close(final bool) error {
	if final && e.scrapes.Load() > 0 {
		e.finalize.Store(true)
		select {
		case <-e.scraped:
		case <-time.After(LastScrapeWait):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	if serr := <-e.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// guard answers /metrics only: to the token's bearer when there is one,
// and, on loopback, only to requests that name the address it listens on
// (another site's page resolving a name to 127.0.0.1 is refused: DNS
// rebinding).
func (e *Endpoint) guard(addr *net.TCPAddr, remote bool, token []byte, next http.Handler) http.Handler {
	port := strconv.Itoa(addr.Port)
	hosts := map[string]bool{addr.String(): true, net.JoinHostPort("localhost", port): true}
	if addr.IP.IsLoopback() {
		hosts[net.JoinHostPort("127.0.0.1", port)], hosts[net.JoinHostPort("::1", port)] = true, true
	}
	want := append([]byte("Bearer "), token...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/metrics":
			http.NotFound(w, r)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		case !remote && !hosts[r.Host]:
			http.Error(w, "misdirected request", http.StatusMisdirectedRequest)
		case token != nil && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1:
			w.Header().Set("WWW-Authenticate", `Bearer realm="calibra"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			final := e.finalize.Load() // the scrape starts after the last figures
			next.ServeHTTP(w, r)
			e.scrapes.Add(1)
			if final {
				select {
				case e.scraped <- struct{}{}:
				default:
				}
			}
		}
	})
}

// readToken reads the bearer token from path: one line, the file no one
// else may read.
func readToken(ctx context.Context, path string) ([]byte, error) {
	what := "--metrics-token-file " + path
	data, err := safefs.ReadInput(ctx, path, safefs.MaxSecretBytes, fault.Input("keep the token alone in it", "%s is larger than %d bytes", what, safefs.MaxSecretBytes))
	var in *fault.InputError
	if err != nil && !errors.As(err, &in) {
		err = fault.Input("give the file that holds the token", "%s cannot be read: %v", what, err)
	}
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fault.Input("chmod 600 "+path, "%s can be read by other accounts (mode %04o), and it holds the token", what, st.Mode().Perm())
	}
	token := bytes.TrimSpace(data)
	if len(token) == 0 || bytes.ContainsAny(token, "\r\n") {
		return nil, fault.Input("write the token alone on one line", "%s holds no token of one line", what)
	}
	return token, nil
}

// ListenTCP listens on addr (given as flag to who), which must be a
// loopback address unless remote: every address the host name stands for,
// and the one bound.
func ListenTCP(ctx context.Context, flag, who, addr string, remote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fault.Input("give HOST:PORT, e.g. 127.0.0.1:8080 (port 0 picks a free one)", "%s %q is not HOST:PORT", flag, addr)
	}
	notLoopback := fault.Input("give 127.0.0.1 or [::1] (an SSH tunnel reaches them from afar), or add --allow-remote to serve other hosts", "%s %q is not a loopback address, and %s answers this host only", flag, addr, who)
	if !remote {
		var ips []net.IP
		if ip := net.ParseIP(host); ip != nil {
			ips = []net.IP{ip}
		} else if host != "" {
			addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
			if err != nil {
				return nil, fault.Input("give an IP address, e.g. 127.0.0.1:8080", "%s %q: the host name does not resolve (%v)", flag, addr, err)
			}
			for _, a := range addrs {
				ips = append(ips, a.IP)
			}
		}
		if len(ips) == 0 { // ":8080": every interface
			return nil, notLoopback
		}
		for _, ip := range ips {
			if !ip.IsLoopback() {
				return nil, notLoopback
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fault.Input("choose another port, or port 0 for a free one", "cannot listen on %s: %v", addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !remote && (!ok || !a.IP.IsLoopback()) {
		ln.Close()
		return nil, notLoopback
	}
	return ln, nil
}
