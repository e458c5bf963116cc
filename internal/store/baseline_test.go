package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/results"
)

// deviceRun is a stored run of the device study "ci" whose 4k random read
// IOPS are iops, one step a value.
func deviceRun(label string, at time.Time, iops ...float64) *results.Run {
	r := &results.Run{Schema: results.Schema, Status: results.StatusComplete, StartedAt: at, Meta: results.Meta{Command: "run", Label: label,
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
		runs = append(runs, withCopy(t, newRecord("/runs/"+name, r)))
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
	regressed := func(r *results.Run) {
		r.Baseline = &results.Baseline{Spec: "last", Verdict: results.BaselineRegressed, Regressed: true}
	}
	add("slow", deviceRun("d", day(10), 5), regressed)
	add("moved", deviceRun("d", day(11), 6), regressed)
	// Judged on a busy host: its figures are the host's, not the storage's.
	add("busy", deviceRun("d", day(10).Add(12*time.Hour), 4), func(r *results.Run) {
		r.Baseline = &results.Baseline{Spec: "last", Verdict: results.BaselineHostBusy}
	})
	add("old", deviceRun("d", day(12), 7), func(r *results.Run) { r.Meta.ToolVersion = "0.1" })
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
	// A store an older calibra filled has no copy of old's results.json:
	// no baseline can be judged from it, and the verdict counts it.
	if _, err := s.db.Exec(`UPDATE runs SET results_gz = NULL WHERE id = ?`, id("old")); err != nil {
		t.Fatal(err)
	}
	name := func(id string) string { return id[:len(id)-len("@2026-11-01T02:00:00.000000000Z")] }
	for _, tc := range []struct {
		name    string
		accept  string
		q       BaselineQuery
		want    []string
		leftOut []string
		noCopy  int
	}{
		{"last 3", "", BaselineQuery{Target: target, Before: day(8), Limit: 3}, []string{"lab", "b1", "a3"}, nil, 0},
		{"label a", "", BaselineQuery{Target: target, Label: "a", Before: day(8), Limit: 5}, []string{"later", "a3", "a2", "a1"}, nil, 0},
		{"label a, the run itself excluded", "", BaselineQuery{Target: target, Label: "a", Exclude: id("later"), Limit: 2}, []string{"a3", "a2"}, nil, 0},
		{"last before day 3", "", BaselineQuery{Target: target, Before: day(3), Limit: 3}, []string{"a2", "a1"}, nil, 0},
		{"no such label", "", BaselineQuery{Target: target, Label: "nightly", Limit: 3}, nil, nil, 0},
		{"regressed and host-busy runs left out", "", BaselineQuery{Target: target, Before: day(13), Limit: 2}, []string{"later", "lab"}, []string{"moved", "busy", "slow"}, 1},
		{"an accepted run taken in", "moved", BaselineQuery{Target: target, Before: day(13), Limit: 2}, []string{"moved", "later"}, []string{"busy", "slow"}, 1},
		{"an accepted host-busy run taken in", "busy", BaselineQuery{Target: target, Before: day(13), Limit: 2}, []string{"moved", "busy"}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.accept != "" {
				if err := s.Accept(ctx, id(tc.accept), "alice", day(12)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Baseline(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var names, out []string
			for _, r := range got.Runs {
				names = append(names, name(r.ID))
				if stored, err := results.Decode(r.Results, r.ID); err != nil || stored.StartedAt != r.StartedAt {
					t.Errorf("run %s: its stored results.json (%v)", r.ID, err)
				}
			}
			for _, id := range got.LeftOut {
				out = append(out, name(id))
			}
			if fmt.Sprint(names) != fmt.Sprint(tc.want) || fmt.Sprint(out) != fmt.Sprint(tc.leftOut) || got.NoCopy != tc.noCopy {
				t.Errorf("runs %v left out %v, %d without a copy; want %v %v %d", names, out, got.NoCopy, tc.want, tc.leftOut, tc.noCopy)
			}
		})
	}
}

// withCopy gives a record the store's copy of its results.json, as a run
// directory read by Read has.
func withCopy(t *testing.T, rec record) record {
	t.Helper()
	data, err := json.Marshal(rec.run)
	if err != nil {
		t.Fatal(err)
	}
	if rec.files.results, err = compress(bytes.NewReader(data), -1); err != nil {
		t.Fatal(err)
	}
	return rec
}

// Only a run that regressed can be accepted, and only one the store
// holds: each refusal is bad input in one sentence.
func TestAcceptRefuses(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	ids, err := s.Write(ctx, Runs{newRecord("/runs/good", deviceRun("a", time.Now(), 1))})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{ids[0], "did not regress against its baseline"},
		{"nothing@2026", "holds no run nothing@2026"},
	} {
		err := s.Accept(ctx, tc.id, "alice", time.Now())
		if fault.Code(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("accept %s: %v, want bad input saying %q", tc.id, err, tc.want)
		}
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
			DeltaPct: &pct, P: &p, PHolm: &p, BaseN: 6, RunN: 3, Regressed: true, Verdict: results.BaselineRegressed}}}
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
	if n := count(t, s, `SELECT count(*) FROM baseline_runs WHERE run_id = ? AND base_id IN ('x', 'y', 'z')`, ids[0]); n != 3 {
		t.Errorf("%d of the baseline's 3 runs recorded", n)
	}
}

// history --metric gives each label and target its own limit: across
// two labels of three runs each, --limit 2 keeps each label's newest two
// (a limit over all runs kept one label's two).
func TestTrendLimitPerSeries(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	var runs Runs
	for i := range 6 {
		label := []string{"a", "b"}[i%2]
		runs = append(runs, newRecord(fmt.Sprintf("/runs/%s%d", label, i), deviceRun(label, t0.Add(time.Duration(i)*time.Hour), float64(100+i))))
	}
	if _, err := s.Write(ctx, runs); err != nil {
		t.Fatal(err)
	}
	series, err := s.Trend(ctx, Query{Metric: "device.4k-randread.iops_at_max_latency", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, se := range series {
		for _, p := range se.Points {
			got = append(got, fmt.Sprintf("%s:%g", se.Label, p.Value.Value))
		}
	}
	if want := "[a:102 a:104 b:103 b:105]"; fmt.Sprint(got) != want {
		t.Errorf("trend %v, want %s", got, want)
	}
}

// The headline of a study step is the same figure in every run: a device
// run on slower storage whose spec met its bound in no repeat shows that
// spec's figure as missed, not another figure in its place.
func TestHeadlineStable(t *testing.T) {
	fast := deviceRun("a", time.Now(), 100, 110, 120)
	slow := deviceRun("a", time.Now(), 1, 2, 3)
	for _, st := range slow.Steps {
		d := st.Body.(*results.Device)
		d.MaxLatencyUs = 1000
		d.Specs[0].AtMaxLatency = nil
		d.Points = []results.DevicePoint{{Spec: "4k-randread", QD: 1, IOPS: 114}}
	}
	h := func(r *results.Run) []Figure { return headlineOf(r, figuresOf(r)) }
	f, s := h(fast), h(slow)
	if len(f) != 1 || len(s) != 1 || f[0].Name != s[0].Name || f[0].N != 3 {
		t.Fatalf("headlines %+v and %+v, want the same figure", f, s)
	}
	if s[0].N != 0 || s[0].Missed != 3 || s[0].Bound != "p99 ≤ 1 ms" {
		t.Errorf("the slow run's headline %+v, want 3 repeats that missed p99 ≤ 1 ms", s[0])
	}
}
