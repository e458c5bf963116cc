package serve

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"syscall"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// reportPolicy is for what calibra wrote into run directories (report.html)
// and compare's page: their inline scripts run, sandboxed in an origin of
// their own, so they reach neither the token's cookie nor these pages.
const reportPolicy = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"

// MaxCompare is the most runs one compare sets side by side.
const MaxCompare = 12

// runDir is the directory the store records for the run id; a run the
// store does not hold is answered 404.
func (s *Server) runDir(w http.ResponseWriter, r *http.Request, id string) (string, bool) {
	dir, found, err := s.store.RunDir(r.Context(), id)
	switch {
	case err != nil:
		s.internal(w, err)
	case !found:
		s.fail(w, http.StatusNotFound, "the store holds no run %s", id)
	}
	return dir, err == nil && found
}

// sameRun re-checks a recorded directory: it still holds the run the store
// recorded under id (its results.json loads, with the same start time).
// Otherwise the answer is 410 Gone, with calibra store check to see more.
func (s *Server) sameRun(w http.ResponseWriter, id, dir string, run *results.Run, err error) bool {
	switch {
	case err != nil:
		s.fail(w, http.StatusGone, "the run directory recorded for %s cannot be read (%v); calibra store check lists every such run", id, err)
	case store.RunID(dir, run) != id:
		s.fail(w, http.StatusGone, "%s now holds another run (%s), not %s; calibra store check lists every such run", dir, store.RunID(dir, run), id)
	default:
		return true
	}
	return false
}

// runFile answers a file of a recorded run directory (its report.html by
// default), and nothing outside it: the name is opened below the
// directory by handle (os.Root), so neither ".." nor a link leads out,
// and only a regular file is served.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("file")
	if name == "" {
		name = "report.html"
	}
	dir, ok := s.runDir(w, r, id)
	if !ok {
		return
	}
	run, err := results.Load(dir)
	if !s.sameRun(w, id, dir, run, err) {
		return
	}
	f, st, err := openIn(dir, name)
	if errors.Is(err, fs.ErrNotExist) && name == "report.html" {
		s.fail(w, http.StatusNotFound, "run %s has no report.html: calibra report %s writes it", id, dir)
		return
	}
	if err != nil {
		s.fail(w, http.StatusNotFound, "%s of run %s cannot be served: %v", name, id, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Security-Policy", reportPolicy)
	// Only calibra's report is a page; every other file is shown as text.
	if name == "report.html" {
		h.Set("Content-Type", "text/html; charset=utf-8")
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	http.ServeContent(w, r, name, st.ModTime(), f)
}

var errNotRegular = errors.New("not a regular file")

// openIn opens the regular file name below dir, never outside it.
func openIn(dir, name string) (*os.File, fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, nil, errors.New("not a name inside the run directory")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	if lst, err := root.Lstat(name); err != nil {
		return nil, nil, err
	} else if !lst.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	// Non-blocking: a FIFO swapped in after the Lstat does not hang.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// compare answers compare's HTML page for the selected runs (run=ID,
// repeated), the oldest as the base: the page calibra compare --html writes.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	var ids []string
	for _, id := range r.URL.Query()["run"] {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) < 2 || len(ids) > MaxCompare {
		s.fail(w, http.StatusBadRequest, "select from 2 to %d runs to compare (%d selected): tick them in the list of runs", MaxCompare, len(ids))
		return
	}
	dirs := make([]string, len(ids))
	for i, id := range ids {
		dir, ok := s.runDir(w, r, id)
		if !ok {
			return
		}
		dirs[i] = dir
	}
	runs, err := compare.Load(dirs)
	if err != nil {
		s.fail(w, http.StatusGone, "a selected run directory cannot be read (%v); calibra store check lists every such run", err)
		return
	}
	for i, run := range runs {
		if !s.sameRun(w, ids[i], dirs[i], run.Run, nil) {
			return
		}
	}
	slices.SortStableFunc(runs, func(a, b compare.Run) int { return a.StartedAt.Compare(b.StartedAt) })
	t, err := compare.Compare(runs)
	var nc *compare.NoCommonStepError
	if errors.As(err, &nc) {
		s.fail(w, http.StatusUnprocessableEntity, "%v: select runs of the same layers", err)
		return
	}
	if err != nil {
		s.internal(w, err)
		return
	}
	var b bytes.Buffer
	if err := compare.HTML(&b, t, runs); err != nil {
		s.internal(w, err)
		return
	}
	w.Header().Set("Content-Security-Policy", reportPolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}
