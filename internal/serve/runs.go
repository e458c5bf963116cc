package serve

import (
	"bytes"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// pagePolicy is for the report and compare pages, which calibra renders
// from the store: only their own inline scripts and styles (by hash),
// nothing reached outside, and sandboxed in an origin of their own, so
// that even a script that should not be there reaches no page of serve's.
func pagePolicy(styles []string) string {
	return "sandbox allow-scripts; default-src 'none'; script-src " + strings.Join(assets.ScriptHashes, " ") +
		"; style-src " + strings.Join(styles, " ") + "; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

var (
	reportPolicy  = pagePolicy(assets.StyleHashes)
	comparePolicy = pagePolicy(compare.StyleHashes())
)

// MaxCompare is the most runs one compare sets side by side.
const MaxCompare = 12

// loaded is a run the store keeps, read from its copy of results.json.
type loaded struct {
	store.StoredRun
	run *results.Run
}

// load reads the run id from the store; a run the store does not hold is
// answered 404, one recorded by an older calibra (no copy kept) 404 with
// the command that keeps it.
func (s *Server) load(w http.ResponseWriter, r *http.Request, id string) (loaded, bool) {
	st, found, err := s.store.Stored(r.Context(), id)
	switch {
	case err != nil:
		s.internal(w, err)
	case !found:
		s.fail(w, http.StatusNotFound, "the store holds no run %s", id)
	case st.Results == nil:
		s.fail(w, http.StatusNotFound, "run %s was recorded by an older calibra, which kept no copy of its results; calibra store import %s stores it", id, st.Dir)
	default:
		run, err := results.Decode(st.Results, id+"/results.json")
		if err != nil {
			s.internal(w, err)
			return loaded{}, false
		}
		return loaded{st, run}, true
	}
	return loaded{}, false
}

// runFile answers a run's report, rendered by calibra's report code from
// the store's copy of its results.json and timeseries.csv, or those files
// as downloads; never a file of its run directory, which serve does not
// open.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("file")
	if name != "" && name != "results.json" && name != results.TimeseriesFile {
		s.fail(w, http.StatusNotFound, "calibra serve shows a run's report, results.json and timeseries.csv, as the store keeps them; %s is none of them", name)
		return
	}
	run, ok := s.load(w, r, id)
	if !ok {
		return
	}
	switch name {
	case "results.json":
		download(w, name, run.Results)
		return
	case results.TimeseriesFile:
		download(w, name, run.Timeseries)
		return
	}
	var ts *results.Timeseries
	if run.Timeseries != nil {
		var err error
		if ts, err = results.ReadTimeseriesFile(bytes.NewReader(run.Timeseries), id+"/"+results.TimeseriesFile); err != nil {
			s.internal(w, err)
			return
		}
	}
	page, err := report.Page(id, run.run, ts)
	if err != nil {
		s.internal(w, err)
		return
	}
	w.Header().Set("Content-Security-Policy", reportPolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// download answers a stored file as text to save, never to show as a
// page; a file the store lacks is 404.
func download(w http.ResponseWriter, name string, data []byte) {
	if data == nil {
		http.Error(w, "the store keeps no "+name+" of this run", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	_, _ = w.Write(data)
}

// compare answers compare's HTML page for the selected runs (run=ID,
// repeated), the oldest as the base: the page calibra compare --html
// writes, from the store's copies of their results.
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
	dirs, loadedRuns := make([]string, len(ids)), make([]*results.Run, len(ids))
	for i, id := range ids {
		run, ok := s.load(w, r, id)
		if !ok {
			return
		}
		dirs[i], loadedRuns[i] = run.Dir, run.run
	}
	runs := compare.Named(dirs, loadedRuns)
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
	w.Header().Set("Content-Security-Policy", comparePolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}
