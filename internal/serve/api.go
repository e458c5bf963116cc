package serve

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// view is what one page shows, three ways: its template and the data
// that fills it; its data as /api/NAME answers it in JSON; and as
// /api/NAME.csv answers it, a header and then rows.
type view struct {
	name  string
	page  any
	data  any
	table [][]string
}

// pageError is a page's answer to a request it cannot serve, in one
// sentence.
type pageError struct {
	code int
	text string
}

func (e *pageError) Error() string { return e.text }

func badRequest(text string) error { return &pageError{http.StatusBadRequest, text} }

func notFound(format string, args ...any) error {
	return &pageError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// page answers path with the page build makes, and its data at /api/api
// (JSON) and /api/api.csv, behind the same token and checks.
func (s *Server) page(mux *http.ServeMux, path, api string, build func(*http.Request) (view, error)) {
	mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		v, err := build(r)
		if err != nil {
			s.failWith(w, err)
			return
		}
		s.render(w, v.name, v.page)
	})
	mux.HandleFunc("GET /api/"+api, func(w http.ResponseWriter, r *http.Request) {
		v, err := build(r)
		if err != nil {
			apiError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = results.WriteJSON(w, v.data)
	})
	mux.HandleFunc("GET /api/"+api+".csv", func(w http.ResponseWriter, r *http.Request) {
		v, err := build(r)
		if err != nil {
			apiError(w, err)
			return
		}
		name := strings.Trim(path, "/{$}")
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="calibra-`+cmp.Or(name, "runs")+`.csv"`)
		cw := csv.NewWriter(w)
		for _, row := range v.table {
			// Formula and control characters made harmless, as history's CSV.
			_ = cw.Write(results.CSVRecord(row))
		}
		cw.Flush()
	})
}

// failWith answers a page's failure: its own status and sentence, or the
// store's error.
func (s *Server) failWith(w http.ResponseWriter, err error) {
	var pe *pageError
	if errors.As(err, &pe) {
		s.fail(w, pe.code, "%s", pe.text)
		return
	}
	s.internal(w, err)
}

// apiError answers an API request's failure as plain text.
func apiError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var pe *pageError
	if errors.As(err, &pe) {
		code = pe.code
	}
	http.Error(w, results.TerminalLine(err.Error()), code)
}

// apiURL is the address of this request's data as api (runs, runs.csv...).
func (s *Server) apiURL(api string, r *http.Request) string {
	u := s.base + "/api/" + api
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// render writes one of the pages.
func (s *Server) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A failure midway (the client went away) has no one left to tell:
	// the status line is sent already.
	_ = pages.ExecuteTemplate(w, name, data)
}
