package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/results"
)

// synthTemplates are the fixture runs synthetic runs are made from, in the
// mix a store of months of work might hold: a full study in ten, OLTP runs,
// repeated OLTP runs and device sweeps.
var synthTemplates = []string{"quick", "oltp-base", "oltp-base", "oltp-base", "oltp-base", "repeats-a", "repeats-a", "repeats-a", "device-a", "device-a"}

// synth makes the i-th synthetic run: a fixture's run an hour after the
// last, on one of four arrays and three hosts, with its NOPM drifting,
// three thresholds (one failed in every fifth run) and a failure in
// every seventeenth.
func synth(t testing.TB, i int) *results.Run {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, synthTemplates[i%len(synthTemplates)], "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	r.StartedAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
	end := r.StartedAt.Add(10 * time.Minute)
	r.FinishedAt = &end
	r.Meta.Label = fmt.Sprintf("array-%d", i%4)
	r.Meta.Host.Hostname = fmt.Sprintf("bench-%d", i%3)
	r.Meta.Storage.Path = fmt.Sprintf("/mnt/array-%d", i%4)
	if i%17 == 16 {
		r.Status, r.Error = results.StatusFailed, "synthetic failure"
	}
	for _, st := range r.Steps {
		if o, ok := st.Body.(*results.OLTP); ok && o.NOPM != nil {
			v := *o.NOPM * (1 + 0.002*float64(i%50))
			o.NOPM = &v
		}
	}
	r.Verdicts = nil
	for k := range 3 {
		v := float64(k)
		r.Verdicts = append(r.Verdicts, results.Verdict{Threshold: fmt.Sprintf("oltp.p99_ms < %d", 10+k), Value: &v, OK: k != 0 || i%5 != 0})
	}
	return &r
}

// synthRecords are n synthetic runs ready to record, as if read from
// directories under /synthetic.
func synthRecords(t testing.TB, n int) Runs {
	recs := make(Runs, n)
	for i := range recs {
		recs[i] = newRecord(fmt.Sprintf("/synthetic/run-%05d", i), synth(t, i))
	}
	return recs
}

// synthDirs writes n synthetic run directories under root.
func synthDirs(t testing.TB, root string, n int) []string {
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprintf("run-%05d", i))
		data, err := json.MarshalIndent(synth(t, i), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dirs[i], "results.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// fill records runs in a store, in transactions of 500.
func fill(t testing.TB, s *Store, runs Runs) {
	for len(runs) > 0 {
		n := min(len(runs), 500)
		if _, err := s.Write(context.Background(), runs[:n]); err != nil {
			t.Fatal(err)
		}
		runs = runs[n:]
	}
}

// TestSynthetic: the generator's runs load as calibra's own do, and
// history counts their thresholds and follows their drifting NOPM.
func TestSynthetic(t *testing.T) {
	dirs := synthDirs(t, t.TempDir(), 20)
	s := openTemp(t)
	if _, err := s.Import(context.Background(), dirs); err != nil {
		t.Fatal(err)
	}
	rows, err := s.History(context.Background(), Query{Label: "array-0", Limit: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d runs of array-0, want 5", len(rows))
	}
	for _, r := range rows {
		var i int
		fmt.Sscanf(filepath.Base(r.Dir), "run-%d", &i)
		if want := map[bool]int{true: 1, false: 0}[i%5 == 0]; r.Thresholds != 3 || r.Failed != want {
			t.Errorf("run %d: %d thresholds, %d failed; want 3, %d", i, r.Thresholds, r.Failed, want)
		}
	}
	series, err := s.Trend(context.Background(), Query{Metric: "oltp.nopm", Label: "array-1", Storage: "/mnt/array-1"})
	if err != nil {
		t.Fatal(err)
	}
	// array-1: runs 1, 5, 9, 13, 17 on hosts 1, 2, 0, 1, 2; run 9 is a
	// device sweep.
	if len(series) != 2 || len(series[0].Points) != 2 || len(series[1].Points) != 2 || series[0].Host != "bench-1" {
		t.Fatalf("array-1's nopm: %+v, want runs 1 and 13 on bench-1, 5 and 17 on bench-2", series)
	}
	if p := series[0].Points; p[1].Value.Value <= p[0].Value.Value {
		t.Errorf("bench-1's nopm %v then %v: the drift upwards is lost", p[0].Value.Value, p[1].Value.Value)
	}
}

// BenchmarkHistory answers history on a store of 10,000 runs: open it,
// query, print, close, as the command does.
func BenchmarkHistory(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "results.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	fill(b, s, synthRecords(b, 10000))
	s.Close()
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"latest 20", Query{Limit: 20}},
		{"every run", Query{}},
		{"label and status", Query{Label: "array-2", Status: "complete", Limit: 20}},
		{"trend of a label", Query{Metric: "oltp.nopm", Label: "array-*"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				s, err := OpenExisting(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				if c.q.Metric != "" {
					var series []Series
					if series, err = s.Trend(ctx, c.q); err != nil || len(series) == 0 {
						b.Fatal(series, err)
					}
					err = WriteTrend(io.Discard, "text", series)
				} else {
					var rows []Row
					if rows, err = s.History(ctx, c.q); err != nil || len(rows) == 0 {
						b.Fatal(len(rows), err)
					}
					err = WriteRuns(io.Discard, "text", rows)
				}
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkImport records 1,000 run directories into a new store.
func BenchmarkImport(b *testing.B) {
	ctx := context.Background()
	dirs := synthDirs(b, b.TempDir(), 1000)
	for b.Loop() {
		s, err := Open(ctx, filepath.Join(b.TempDir(), "results.db"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Import(ctx, dirs); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
