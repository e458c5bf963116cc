package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/results"
)

// deviceRun is a stored run of the device study "ci" whose 4k random read
// IOPS are iops, one step a value.
func deviceRun(label string, at time.Time, iops ...float64) *results.Run {
	r := &results.Run{Status: results.StatusComplete, StartedAt: at, Meta: results.Meta{Command: "run", Label: label,
		Host: results.Host{Hostname: "ci-1"}, Storage: results.Storage{Path: "/mnt/array"},
		Engine: &results.Engine{Name: "postgresql"}, Study: map[string]any{"name": "ci"}}}
	for _, v := range iops {
		r.Steps = append(r.Steps, results.Step{StepHeader: results.StepHeader{Kind: "device", Name: "device", Status: results.StatusComplete},
			Body: &results.Device{Specs: []results.DeviceSpec{{Name: "4k-randread", AtMaxLatency: &results.DeviceBest{IOPS: v}}}}})
	}
	return r
}

// The baseline's runs: complete runs of the same host, engine, storage
// (a lab built under it counts), command and study; "last" the newest
// that started before the run, a label that label's newest; each with
// every repeat's value.
func TestBaselineSelectsTheSameTarget(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	day := func(n int) time.Time { return t0.Add(time.Duration(n) * 24 * time.Hour) }
	var runs Runs
	add := func(name string, r *results.Run, change func(*results.Run)) {
		if change != nil {
			change(r)
		}
		runs = append(runs, newRecord("/runs/"+name, r))
	}
	add("a1", deviceRun("a", day(1), 100, 101), nil)
	add("a2", deviceRun("a", day(2), 102, 103), nil)
	add("a3", deviceRun("a", day(3), 104, 105), nil)
	add("b1", deviceRun("b", day(4), 50), nil)
	add("lab", deviceRun("b", day(5), 10), func(r *results.Run) {
		r.Meta.Storage = results.Storage{Path: lab.MountUnder("/mnt/array"), Device: "/dev/loop3", Lab: &results.Lab{Spec: "hdd"}}
	})
	add("host", deviceRun("a", day(6), 1), func(r *results.Run) { r.Meta.Host.Hostname = "ci-2" })
	add("path", deviceRun("a", day(6), 1), func(r *results.Run) { r.Meta.Storage.Path = "/mnt/other" })
	add("engine", deviceRun("a", day(6), 1), func(r *results.Run) { r.Meta.Engine.Name = "mariadb" })
	add("study", deviceRun("a", day(6), 1), func(r *results.Run) { r.Meta.Study = map[string]any{"name": "other"} })
	add("command", deviceRun("a", day(6), 1), func(r *results.Run) { r.Meta.Command = "device" })
	add("failed", deviceRun("a", day(6), 1), func(r *results.Run) { r.Status = results.StatusFailed })
	add("later", deviceRun("a", day(9), 1), nil)
	if _, err := s.Write(ctx, runs); err != nil {
		t.Fatal(err)
	}
	judged := deviceRun("c", day(8), 99)
	judged.Meta.Storage.Path = lab.MountUnder("/mnt/array") // on a lab tier: the same target
	target := TargetOf(judged)
	if target.Storage != "/mnt/array" {
		t.Fatalf("a lab under /mnt/array is target %q", target.Storage)
	}
	id := func(name string) string {
		return runs[slices.IndexFunc(runs, func(r record) bool { return r.dir == "/runs/"+name })].id
	}
	key := FigureKey{Step: "device/device", Metric: "4k-randread.iops_at_max_latency"}
	for _, tc := range []struct {
		name   string
		q      BaselineQuery
		want   []string
		values []float64
	}{
		{"last 3", BaselineQuery{Target: target, Before: day(8), Limit: 3}, []string{"lab", "b1", "a3"}, []float64{10, 50, 104, 105}},
		{"label a", BaselineQuery{Target: target, Label: "a", Before: day(8), Limit: 5}, []string{"later", "a3", "a2", "a1"}, []float64{1, 104, 105, 102, 103, 100, 101}},
		{"label a, the run itself excluded", BaselineQuery{Target: target, Label: "a", Exclude: id("later"), Limit: 2}, []string{"a3", "a2"}, []float64{104, 105, 102, 103}},
		{"last before day 3", BaselineQuery{Target: target, Before: day(3), Limit: 3}, []string{"a2", "a1"}, []float64{102, 103, 100, 101}},
		{"no such label", BaselineQuery{Target: target, Label: "nightly", Limit: 3}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, values, err := s.Baseline(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range got {
				names = append(names, r.ID[:len(r.ID)-len("@2026-11-01T02:00:00.000000000Z")])
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) || fmt.Sprint(values[key]) != fmt.Sprint(tc.values) {
				t.Errorf("runs %v values %v, want %v %v", names, values[key], tc.want, tc.values)
			}
		})
	}
}

// A run's verdict against its baseline lands in the store's verdicts: one
// row for the run, one per figure, ok unless it regressed.
func TestBaselineVerdictRecorded(t *testing.T) {
	s := openTemp(t)
	r := deviceRun("c", time.Now(), 10, 11, 12)
	p, pct := 0.024, -90.0
	r.Baseline = &results.Baseline{Spec: "last", Runs: []string{"x", "y", "z"}, Verdict: results.BaselineRegressed, Regressed: true, Reason: "it fell",
		Figures: []results.BaselineFigure{{Step: "device/device", Metric: "4k-randread.iops_at_max_latency", BaseMedian: 100, RunMedian: 11,
			DeltaPct: &pct, P: &p, BaseN: 6, RunN: 3, Regressed: true, Verdict: results.BaselineRegressed}}}
	ids, err := s.Write(context.Background(), Runs{newRecord("/runs/c", r)})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, `SELECT count(*) FROM verdicts WHERE run_id = ? AND kind = 'baseline' AND verdict = 'regressed' AND ok = 0 AND detail LIKE '%it fell'`, ids[0]); n != 1 {
		t.Errorf("%d baseline rows", n)
	}
	if n := count(t, s, `SELECT count(*) FROM verdicts WHERE run_id = ? AND kind = 'baseline_figure' AND step = 'device/device' AND ok = 0 AND value = -90`, ids[0]); n != 1 {
		t.Errorf("%d baseline figure rows", n)
	}
}
