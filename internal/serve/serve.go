// Package serve is calibra serve: a local, read-only web view of the
// results store. Its pages list the runs (filter, sort, select), open a
// run's own report.html, compare selected runs (compare's HTML page) and
// draw a figure's trend across runs. Every request carries a random token
// (in the URL once, then as a cookie); everything is embedded, so it works
// offline (docs/store.md).
package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// TokenParam is the query parameter that carries the token.
const TokenParam = "token"

// NewToken is a random token: 256 bits from crypto/rand, URL-safe.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// Server answers the pages of one store.
type Server struct {
	store  *store.Store
	token  []byte
	cookie string
	mux    *http.ServeMux
}

// New serves st; every request must carry token.
func New(st *store.Store, token string) *Server {
	sum := sha256.Sum256([]byte(token))
	s := &Server{
		store: st,
		token: []byte(token),
		// Named after the token: two servers on one host (cookies ignore
		// ports) keep theirs apart; the name does not give the token away.
		cookie: "calibra_" + hex.EncodeToString(sum[:6]),
		mux:    http.NewServeMux(),
	}
	s.mux.HandleFunc("GET /{$}", s.list)
	s.mux.HandleFunc("GET /runs/{id}/{file...}", s.runFile)
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /trend", s.trend)
	s.mux.HandleFunc("GET /regressions", s.regressions)
	s.mux.HandleFunc("GET /static/{name}", s.static)
	return s
}

// ownPolicy lets calibra serve's own pages run only its embedded scripts
// and reach nothing outside.
const ownPolicy = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP checks the method and the token, then answers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ownPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "calibra serve is read-only: it answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	tok, fromURL := r.URL.Query().Get(TokenParam), true
	if tok == "" {
		fromURL = false
		if c, err := r.Cookie(s.cookie); err == nil {
			tok = c.Value
		}
	}
	if subtle.ConstantTimeCompare([]byte(tok), s.token) != 1 {
		http.Error(w, "403: open the URL calibra serve printed, with its token", http.StatusForbidden)
		return
	}
	if fromURL {
		// Lax, not Strict: a run's report is sandboxed (another origin),
		// and its links back must still carry the cookie.
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	s.mux.ServeHTTP(w, r)
}

// fail answers with a page that says what is wrong in one sentence.
func (s *Server) fail(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pages.ExecuteTemplate(w, "error", errorPage{frame: frame{Title: http.StatusText(code), Store: s.store.Where}, Text: fmt.Sprintf(format, args...)})
}

// internal answers a failure of the store or the disk.
func (s *Server) internal(w http.ResponseWriter, err error) {
	s.fail(w, http.StatusInternalServerError, "%v", err)
}

// MaxRegressions is the most judged runs the regressions page lists.
const MaxRegressions = 200

type regressionRun struct {
	URL, Label, Started, Verdict, Class, Detail string
	Figures                                     []regressionFigure
}

type regressionFigure struct {
	Step, Detail, Change, Verdict string
	Regressed                     bool
}

type regressionsPage struct {
	frame
	All  bool
	Runs []regressionRun
}

// regressions lists the runs that regressed against their baseline
// (calibra run --baseline), newest first, with the figures judged; all=1
// lists every verdict.
func (s *Server) regressions(w http.ResponseWriter, r *http.Request) {
	p := regressionsPage{frame: frame{Title: "Regressions", Store: s.store.Where}, All: r.URL.Query().Get("all") != ""}
	verdicts, err := s.store.Regressions(r.Context(), p.All, MaxRegressions)
	if err != nil {
		s.internal(w, err)
		return
	}
	for _, v := range verdicts {
		run := regressionRun{URL: runURL(v.ID), Label: orDash(v.Label), Started: v.StartedAt.UTC().Format(time.DateTime), Verdict: v.Verdict, Detail: v.Detail}
		switch v.Verdict {
		case results.BaselineRegressed:
			run.Class = "failed"
		case results.BaselinePass:
			run.Class = "complete"
		}
		for _, f := range v.Figures {
			change := "-"
			if f.DeltaPct != nil {
				change = strconv.FormatFloat(*f.DeltaPct, 'f', 1, 64) + "%"
			}
			run.Figures = append(run.Figures, regressionFigure{Step: f.Step, Detail: f.Detail, Change: change, Verdict: f.Verdict, Regressed: f.Regressed})
		}
		p.Runs = append(p.Runs, run)
	}
	s.render(w, "regressions", p)
}
