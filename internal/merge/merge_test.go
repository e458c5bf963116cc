package merge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/hist"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
)

var startAt = time.Date(2026, 3, 2, 14, 5, 0, 0, time.UTC)

// spec is what a fixture partition differs by.
type spec struct {
	index, of int
	seed      uint64
	startAt   time.Time
	noWindow  bool // no raw/oltp-window.hlog
	whole     bool // an oltp run without --partition
}

// partitionDir writes the run directory of a partition that ran 2 users
// for a 10 s window after a 2 s ramp-up, with latencies its index scales,
// and returns its path.
func partitionDir(t *testing.T, root string, s spec) string {
	t.Helper()
	if s.seed == 0 {
		s.seed = 1
	}
	if s.startAt.IsZero() {
		s.startAt = startAt
	}
	dir := filepath.Join(root, fmt.Sprintf("p%d-of-%d-seed%d-%s", s.index, s.of, s.seed, s.startAt.Format("150405")))
	ws, we := s.startAt.Add(2*time.Second), s.startAt.Add(12*time.Second)
	k := int64(s.index)
	o := &results.OLTP{Workload: "tpcc-like", Warehouses: 4, Users: 2, Mode: "procedures", KeyingThinking: false, RampupS: 2, DurationS: 10,
		LatencyBasis: "service", Profile: "spec", WindowStart: &ws, WindowEnd: &we, TPMClient: float64(600 * k), ARTMs: float64(k),
		NewOrderCommits: 44 * k, Missing: map[string]string{}, MixPct: map[string]float64{},
		Delivery: &results.DeliverySkips{Deliveries: 4 * k, SkippedDistricts: k},
		Transactions: map[string]results.TxStats{
			"new_order":    {Count: 45 * k, Rollbacks: k, LatMs: results.Latency{Mean: float64(k)}},
			"payment":      {Count: 43 * k, LatMs: results.Latency{Mean: float64(k)}},
			"order_status": {Count: 4 * k, LatMs: results.Latency{Mean: float64(k)}},
			"delivery":     {Count: 4 * k, LatMs: results.Latency{Mean: float64(k)}},
			"stock_level":  {Count: 4 * k, LatMs: results.Latency{Mean: float64(k)}},
		},
		Checks: []results.BandCheck{
			{Name: "new_order.remote_lines", Count: 4 * k, Of: 450 * k}, {Name: "payment.remote", Count: 6 * k, Of: 43 * k},
			{Name: "payment.by_name", Count: 26 * k, Of: 43 * k}, {Name: "order_status.by_name", Count: 2 * k, Of: 4 * k},
		},
	}
	if !s.whole {
		at := s.startAt
		o.Partition = &results.Partition{Index: s.index, Of: s.of, StartAt: &at, UsersTotal: 2 * s.of, HomeWarehouses: 4 / s.of, Counters: s.index == 1}
	}
	if s.index == 1 {
		nopm, tpm, cp := float64(1000), float64(2300), int64(0)
		o.NOPM, o.TPMDB, o.CheckpointsInWindow = &nopm, &tpm, &cp
		o.Warnings = []string{"no checkpoint began in the timed window"}
	} else {
		o.Missing["nopm"] = "the database's counters are read by the counter partition"
	}
	fin := s.startAt.Add(13 * time.Second)
	run := &results.Run{StartedAt: s.startAt.Add(-time.Second), Meta: results.Meta{ToolVersion: "test", Command: "oltp run", Seed: s.seed,
		Host:   results.Host{Hostname: fmt.Sprintf("host%d", s.index), CPUs: 2},
		Engine: &results.Engine{Name: "postgresql", Version: "15.0", Target: "postgres://bench@db.invalid/bench"}}}
	d, err := results.Create(dir, run)
	if err != nil {
		t.Fatal(err)
	}
	st := results.Step{StepHeader: results.StepHeader{Kind: results.KindOLTP, Name: "oltp", Status: results.StatusComplete,
		StartedAt: s.startAt.Add(-time.Second), FinishedAt: &fin}, Body: o}
	if err := d.Update(func(r *results.Run) {
		r.Steps, r.Status, r.FinishedAt = []results.Step{st}, results.StatusComplete, &fin
	}); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "raw", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !s.noWindow {
		wl := hist.NewLog(ws, oltp.WindowLogComment)
		for j, name := range oltp.TxNames() {
			h := hist.New()
			for v := range o.Transactions[name].Count {
				h.Record(time.Duration(k*(v+1)*int64(j+1)) * 100 * time.Microsecond)
			}
			if err := wl.Add(h, ws, we, name); err != nil {
				t.Fatal(err)
			}
		}
		write(windowLog, wl.Bytes())
	}
	sl := hist.NewLog(s.startAt, "seconds")
	var ticks []oltp.Tick
	for sec := 1; sec <= 12; sec++ {
		phase := "measure"
		if sec <= 2 {
			phase = "rampup"
		}
		// A partition's ticks land a few milliseconds off the shared start.
		end := s.startAt.Add(time.Duration(sec)*time.Second + time.Duration(s.index)*3*time.Millisecond)
		h := hist.New()
		for v := range 10 * k {
			h.Record(time.Duration(v+int64(sec)) * time.Millisecond)
		}
		if err := sl.Add(h, end.Add(-time.Second), end, phase); err != nil {
			t.Fatal(err)
		}
		ticks = append(ticks, oltp.Tick{At: end, ElapsedS: float64(sec), Phase: phase, TPM: float64(600 * k), NOPMClient: float64(270 * k),
			ARTMs: float64(k), P90Ms: 9, Users: 2})
	}
	write(secondsLog, sl.Bytes())
	var buf bytes.Buffer
	if err := oltp.WriteTimeseries(&buf, ticks); err != nil {
		t.Fatal(err)
	}
	write(ticksFile, buf.Bytes())
	return dir
}

// The merged run directory, rendered: results.json and report.md.
func TestMergeAddsUpThePartitions(t *testing.T) {
	root := t.TempDir()
	dirs := []string{partitionDir(t, root, spec{index: 2, of: 2}), partitionDir(t, root, spec{index: 1, of: 2})}
	out := filepath.Join(root, "merged")
	got, err := Merge(Config{Dirs: dirs, Out: out, ToolVersion: "test"})
	if err != nil || got != out {
		t.Fatalf("merge: %q, %v", got, err)
	}
	r, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	o := r.Steps[0].Body.(*results.OLTP)
	if o.Users != 4 || o.TPMClient != 1800 || *o.NOPM != 1000 || o.NewOrderCommits != 132 || len(o.Partitions) != 2 || o.Partitions[0].Index != 1 {
		t.Errorf("merged: %d users, tpm_client %v, nopm %v, %d New-Orders, partitions %+v", o.Users, o.TPMClient, *o.NOPM, o.NewOrderCommits, o.Partitions)
	}
	// Partition 1's New-Orders took 0.1 to 4.5 ms, partition 2's 0.2 to
	// 18 ms: their max, and the mean of means weighted by count.
	if no := o.Transactions["new_order"]; no.Count != 135 || no.LatMs.Max < 18 || no.LatMs.Max > 18.02 || no.LatMs.Mean != 1.667 {
		t.Errorf("new_order merged: %+v", no)
	}
	for _, name := range []string{"results.json", "report.md", "timeseries.csv"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "merged-"+name), bytes.ReplaceAll(data, []byte(root), []byte("ROOT")))
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Error(err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, ".merged.merging-*")); len(leftovers) > 0 {
		t.Errorf("staging left behind: %v", leftovers)
	}
}

// Directories that are not exactly the partitions of one run are refused
// in one sentence, exit 2, and nothing is written.
func TestMergeRefusesRunsThatDoNotBelongTogether(t *testing.T) {
	root := t.TempDir()
	p1, p2, p3 := partitionDir(t, root, spec{index: 1, of: 3}), partitionDir(t, root, spec{index: 2, of: 3}), partitionDir(t, root, spec{index: 3, of: 3})
	other2 := partitionDir(t, root, spec{index: 2, of: 2})
	later := partitionDir(t, root, spec{index: 2, of: 3, startAt: startAt.Add(time.Minute)})
	seeded := partitionDir(t, root, spec{index: 2, of: 3, seed: 7})
	whole := partitionDir(t, root, spec{index: 1, of: 1, whole: true, seed: 9})
	noWindow := partitionDir(t, root, spec{index: 3, of: 3, noWindow: true, seed: 3})
	full := filepath.Join(root, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		dirs []string
		out  string
		want string
	}{
		{"a partition missing", []string{p1, p3}, "", "partition 2/3 is missing"},
		{"a partition twice", []string{p1, p2, p2, p3}, "", "are both partition 2/3"},
		{"another split", []string{p1, other2, p3}, "", "split into 3 and 2"},
		{"another start", []string{p1, later, p3}, "", "started at 2026-03-02T14:05:00Z and 2026-03-02T14:06:00Z"},
		{"another seed", []string{p1, seeded, p3}, "", "seeds 1 and 7"},
		{"not a partition", []string{p1, p2, whole}, "", "holds no partition of a split oltp run"},
		{"no window log", []string{p1, p2, noWindow}, "", "lacks raw/oltp-window.hlog"},
		{"no run directory", []string{p1, p2, filepath.Join(root, "nothing")}, "", "holds no results.json"},
		{"an out with files", []string{p1, p2, p3}, full, "already holds files"},
		{"nothing given", nil, "", "needs the partitions' run directories"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := c.out
			if out == "" {
				out = filepath.Join(root, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			}
			_, err := Merge(Config{Dirs: c.dirs, Out: out})
			if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "\n") > 0 {
				t.Fatalf("%v; want one input error saying %q", err, c.want)
			}
			if c.out == "" {
				if _, err := os.Stat(out); err == nil {
					t.Errorf("a refused merge wrote %s", out)
				}
			}
			if leftovers, _ := filepath.Glob(filepath.Join(root, ".*merging-*")); len(leftovers) > 0 {
				t.Errorf("staging left behind: %v", leftovers)
			}
		})
	}
}
