// Package serve is calibra serve: a local, read-only web view of the
// results store. Its pages list the runs (filter, sort, select), show a
// run's report, compare selected runs (compare's HTML page) and draw a
// figure's trend across runs, all from what the store keeps: serve never
// opens a run directory. Every address carries a random token in its
// path (/t/TOKEN/...), never a cookie, which every port of the host would
// receive; everything is embedded, so it works offline (docs/store.md).
package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// NewToken is a random token: 256 bits from crypto/rand, URL-safe.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Path is the address of the run list with token: the one serve prints.
func Path(token string) string { return "/t/" + token + "/" }

// Server answers the pages of one store.
type Server struct {
	store *store.Store
	now   func() time.Time // the clock a heartbeat's age is read by
	token []byte
	base  string          // /t/TOKEN, before every address serve makes
	hosts map[string]bool // the Host headers it answers
	pages http.Handler
}

// New serves st on the listener at addr; every request must carry token
// in its path and name addr in its Host header (or localhost, or, when
// listening on every interface, this host's name, or one of names).
func New(st *store.Store, token string, addr net.Addr, names ...string) *Server {
	s := &Server{store: st, now: time.Now, token: []byte(token), base: strings.TrimSuffix(Path(token), "/"), hosts: hostsOf(addr, names)}
	mux := http.NewServeMux()
	s.page(mux, "/{$}", "runs", s.listView)
	s.page(mux, "/dashboard", "dashboard", s.dashboardView)
	s.page(mux, "/live", "live", s.liveView)
	s.page(mux, "/trend", "trend", s.trendView)
	s.page(mux, "/regressions", "regressions", s.regressionsView)
	mux.HandleFunc("GET /runs/{id}/{file...}", s.runFile)
	mux.HandleFunc("GET /compare", s.compare)
	mux.HandleFunc("GET /static/{name}", s.static)
	s.pages = http.StripPrefix(s.base, mux)
	return s
}

// hostsOf is every Host header that names addr: its address, localhost
// (a Unix socket's only name), and names, each with addr's port (a
// browser leaves out port 80).
func hostsOf(addr net.Addr, names []string) map[string]bool {
	hosts := map[string]bool{}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		hosts["localhost"] = true
		return hosts
	}
	names = append(names, "localhost", tcp.IP.String())
	if tcp.IP.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			names = append(names, h)
		}
	}
	port := strconv.Itoa(tcp.Port)
	for _, n := range names {
		hp := strings.ToLower(net.JoinHostPort(strings.Trim(n, "[]"), port))
		hosts[hp] = true
		if port == "80" {
			hosts[strings.TrimSuffix(hp, ":80")] = true
		}
	}
	return hosts
}

// ownPolicy lets calibra serve's own pages run and style only its
// embedded files, and reach nothing outside: the live page's script asks
// serve alone for the run's new seconds.
const ownPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP checks the Host, where the request comes from, the method and
// the token, then answers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ownPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	// Another name for this address is a page of another site that a DNS
	// answer pointed here (rebinding).
	if !s.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "421: calibra serve answers only the address it printed, not "+strconv.Quote(results.TerminalLine(r.Host)), http.StatusMisdirectedRequest)
		return
	}
	// Another site's page (another port of this host among them) may
	// guess no token, but is refused before it is read.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		http.Error(w, "403: calibra serve answers its own pages and the URL it printed, not another site's ("+strconv.Quote(results.TerminalLine(site))+")", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		http.Error(w, "403: calibra serve answers its own pages, not another origin's", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "calibra serve is read-only: it answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	tok, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/t/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/t/") || subtle.ConstantTimeCompare([]byte(tok), s.token) != 1 {
		http.Error(w, "403: open the URL calibra serve printed, with its token", http.StatusForbidden)
		return
	}
	if r.URL.Path == s.base {
		http.Redirect(w, r, s.base+"/", http.StatusSeeOther)
		return
	}
	s.pages.ServeHTTP(w, r)
}

// fail answers with a page that says what is wrong in one sentence.
func (s *Server) fail(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pages.ExecuteTemplate(w, "error", errorPage{frame: s.frame(http.StatusText(code)), Text: fmt.Sprintf(format, args...)})
}

// internal answers a failure of the store or the disk.
func (s *Server) internal(w http.ResponseWriter, err error) {
	s.fail(w, http.StatusInternalServerError, "%v", err)
}

// MaxRegressions is the most judged runs the regressions page lists.
const MaxRegressions = 200

type regressionRun struct {
	URL     string             `json:"url"`
	Label   string             `json:"label"`
	Started string             `json:"started"`
	Verdict string             `json:"verdict"`
	Class   string             `json:"-"`
	Detail  string             `json:"detail"`
	Figures []regressionFigure `json:"figures"`
	// Base are the runs the baseline took, each with its report's URL;
	// Accepted says who took this run into later baselines, and when.
	Base     []baseRun `json:"baseline_runs"`
	Accepted string    `json:"accepted,omitempty"`
}

type baseRun struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

type regressionFigure struct {
	Step      string `json:"step"`
	Detail    string `json:"detail"`
	Change    string `json:"change"`
	Verdict   string `json:"verdict"`
	Regressed bool   `json:"regressed"`
}

type regressionsPage struct {
	frame
	All             bool
	Runs            []regressionRun
	JSONURL, CSVURL string
}

// regressionsView lists the runs that regressed against their baseline
// (calibra run --baseline), newest first, with the figures judged; all=1
// lists every verdict.
func (s *Server) regressionsView(r *http.Request) (view, error) {
	p := regressionsPage{frame: s.frame("Regressions"), All: r.URL.Query().Get("all") != "", JSONURL: s.apiURL("regressions", r), CSVURL: s.apiURL("regressions.csv", r)}
	verdicts, err := s.store.Regressions(r.Context(), p.All, MaxRegressions)
	if err != nil {
		return view{}, err
	}
	table := [][]string{{"started", "label", "verdict", "step", "figure", "change", "figure verdict"}}
	for _, v := range verdicts {
		run := regressionRun{URL: s.runURL(v.ID), Label: orDash(v.Label), Started: v.StartedAt.UTC().Format(time.DateTime), Verdict: v.Verdict, Detail: v.Detail}
		switch v.Verdict {
		case results.BaselineRegressed:
			run.Class = "failed"
		case results.BaselinePass:
			run.Class = "complete"
		}
		if b := v.Baseline; b != nil {
			for _, id := range b.Runs {
				run.Base = append(run.Base, baseRun{ID: id, URL: s.runURL(id)})
			}
			if b.AcceptedBy != "" {
				run.Accepted = "accepted into later baselines by " + b.AcceptedBy + " at " + b.AcceptedAt.UTC().Format(time.DateTime)
			}
		}
		for _, f := range v.Figures {
			change := "-"
			if f.DeltaPct != nil {
				change = strconv.FormatFloat(*f.DeltaPct, 'f', 1, 64) + "%"
			}
			run.Figures = append(run.Figures, regressionFigure{Step: f.Step, Detail: f.Detail, Change: change, Verdict: f.Verdict, Regressed: f.Regressed})
			table = append(table, []string{run.Started, run.Label, run.Verdict, f.Step, f.Detail, change, f.Verdict})
		}
		if len(v.Figures) == 0 {
			table = append(table, []string{run.Started, run.Label, run.Verdict, "", "", "", ""})
		}
		p.Runs = append(p.Runs, run)
	}
	return view{name: "regressions", page: p, data: p.Runs, table: table}, nil
}
