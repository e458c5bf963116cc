package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/store"
)

// synthStore records n synthetic runs, each a directory holding the
// fixture oltp-base's results.json (21 figures) with a label of its own
// (array-0 to array-99), an engine (postgresql or mariadb), a status and
// a start time an hour after the last.
func synthStore(b *testing.B, n int) *store.Store {
	b.Helper()
	run, err := results.Load(filepath.Join(fixtures, "oltp-base"))
	if err != nil {
		b.Fatal(err)
	}
	tmp := b.TempDir()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []string{results.StatusComplete, results.StatusComplete, results.StatusComplete, results.StatusFailed, results.StatusInterrupted}
	dirs := make([]string, n)
	for i := range n {
		run.Meta.Label = fmt.Sprintf("array-%d", i%100)
		run.Meta.Engine.Name = []string{"postgresql", "mariadb"}[i%2]
		run.Status = statuses[i%len(statuses)]
		run.StartedAt = start.Add(time.Duration(i) * time.Hour)
		data, err := json.Marshal(run)
		if err != nil {
			b.Fatal(err)
		}
		dirs[i] = filepath.Join(tmp, fmt.Sprintf("run-%05d", i))
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dirs[i], "results.json"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	st, err := store.Open(context.Background(), filepath.Join(tmp, "results.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if _, err := st.Import(context.Background(), dirs); err != nil {
		b.Fatal(err)
	}
	return st
}

// The pages with 10,000 runs in the store (issue 55: each under 200 ms):
// the dashboard, the list's default page (the newest 100) and a later
// one, every run on one page, a filtered and sorted list, one figure's
// trend a day at a time and run by run, and their data as JSON and CSV.
func BenchmarkPages10000(b *testing.B) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	h := New(synthStore(b, 10000), testToken, addr)
	for _, c := range []struct{ name, query string }{
		{"dashboard", "/dashboard"},
		{"default", "/"},
		{"page50", "/?page=50"},
		{"all", "/?limit=0"},
		{"filtered", "/?label=array-1*&engine=mariadb&sort=label&since=2025-03-01&until=2025-06-30"},
		{"trend", "/trend?metric=oltp.nopm"},
		{"trend-runs", "/trend?metric=oltp.nopm&per=run"},
		{"api-runs", "/api/runs"},
		{"api-trend-csv", "/api/trend.csv?metric=oltp.nopm"},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", base+c.query, nil)
			req.Host = addr.String()
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", c.query, w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}
