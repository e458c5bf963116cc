package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/report/browsertest"
	"github.com/calibra-bench/calibra/internal/results"
)

const runs = "../results/testdata/runs"

func load(t *testing.T, names ...string) []Run {
	t.Helper()
	var dirs []string
	for _, n := range names {
		dir := filepath.Join(runs, n)
		if strings.HasPrefix(n, "quick-") {
			dir = filepath.Join(quickRuns, n)
		}
		dirs = append(dirs, dir)
	}
	r, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The pairs: real oltp and device runs, every hand-made layer with an
// interrupted run and another engine version, repeated steps, and two
// real quick studies on the same disk with another load on the host, and
// two real replays of one profile.
var pairs = [][2]string{{"oltp-base", "oltp-xss"}, {"device-a", "device-b"}, {"study-a", "study-b"}, {"repeats-a", "repeats-b"}, {"quick-a", "quick-b"}, {"replay-a", "replay-b"}}

// quickRuns are the two recorded quick studies.
const quickRuns = "testdata/runs"

func TestFormatsGolden(t *testing.T) {
	for _, p := range pairs {
		tab, err := Compare(load(t, p[0], p[1]))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Formats {
			t.Run(p[0]+"-"+f, func(t *testing.T) {
				var b bytes.Buffer
				if err := tab.Write(&b, f); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", p[0]+"_"+p[1]+"."+f), b.Bytes())
				switch f {
				case "csv":
					recs, err := csv.NewReader(&b).ReadAll()
					if err != nil || len(recs) != 1+2*len(tab.Rows) {
						t.Errorf("csv: %d records, %v", len(recs), err)
					}
				case "json":
					var back Table
					if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != len(tab.Rows) {
						t.Errorf("json: %v", err)
					}
				}
			})
		}
	}
}

// The summary holds the figures the studies headline, by readable names,
// with 002's three in its order; the table follows grouped by step.
func TestHeadlineSummary(t *testing.T) {
	tab, err := Compare(load(t, "study-a", "study-b"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range tab.Summary {
		got = append(got, b.Title)
	}
	want := "Max random read IOPS through the database; Max sequential read MB/s through the database; Max sequential write MB/s through the database; Max TPS; ART at 40 users; Max users within SLA; QphH"
	if strings.Join(got, "; ") != want {
		t.Errorf("summary %q\nwant %q", strings.Join(got, "; "), want)
	}
	for _, b := range tab.Summary {
		if b.Title == "Max TPS" && (b.Pct[1] == nil || *b.Pct[1] < 33.3 || *b.Pct[1] > 33.4 || b.Verdict[1] != NoVerdict) {
			t.Errorf("max TPS bar %+v: want +33.3%% as a value of single runs, with no verdict", b)
		}
	}
	// Rows come step by step, each step once.
	seen := map[string]bool{}
	for i, r := range tab.Rows {
		if seen[r.Step] && tab.Rows[i-1].Step != r.Step {
			t.Errorf("step %s is split in the table", r.Step)
		}
		seen[r.Step] = true
	}
	if len(tab.Steps) != len(seen) {
		t.Errorf("%d step groups for %d steps", len(tab.Steps), len(seen))
	}
}

// Two real quick studies, each run beside another load: every row has a
// readable name, every step a footnote that says so.
func TestQuickStudies(t *testing.T) {
	tab, err := Compare(load(t, "quick-a", "quick-b"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if r.Title == r.Name || strings.ContainsAny(r.Title, "_.") {
			t.Errorf("%s %s has no readable name: %q", r.Step, r.Name, r.Title)
		}
	}
	for _, s := range tab.Steps {
		if s.Footnote == 0 || !strings.Contains(tab.Footnotes[s.Footnote-1], "another load on the host limited it") {
			t.Errorf("%s: no host footnote (limited by %q)", s.Step, s.LimitedBy)
		}
	}
	if len(tab.Summary) != 11 {
		t.Errorf("%d headline bars, want 11: 3 device specs, iocal's 3, NOPM, the ramp's 3, QphH", len(tab.Summary))
	}
}

// Device metrics are named after their spec and queue depth.
func TestReadableDeviceNames(t *testing.T) {
	tab, err := Compare(load(t, "device-a", "device-b"))
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, r := range tab.Rows {
		titles[r.Name] = r.Title
	}
	for name, want := range map[string]string{
		"4k-randread.qd4.iops":            "4k random read IOPS (qd4)",
		"4k-randread.qd1.p99_us":          "4k random read p99 latency (qd1)",
		"4k-randread.iops_at_max_latency": "4k random read IOPS (p99 ≤ 1 ms)",
		"cpu_iowait_pct":                  "I/O wait",
	} {
		if titles[name] != want {
			t.Errorf("%s is titled %q, want %q", name, titles[name], want)
		}
	}
}

// verdictWords are a better or worse as the renderers write them: at the
// end of a cell or line, as a JSON verdict, or as a colour.
var verdictWords = regexp.MustCompile(`(?m)(better|worse)\s*(\||$|</td>)|"verdict": "(better|worse)"|class="(t )?(good|bad)"`)

// Single runs give values, never a better or worse, in any renderer:
// one run on a shared machine cannot tell a change from noise.
func TestSingleRunsGiveNoVerdict(t *testing.T) {
	for _, pair := range [][2]string{{"study-a", "study-b"}, {"device-a", "device-b"}, {"oltp-base", "oltp-xss"}, {"quick-a", "quick-b"}} {
		rs := load(t, pair[0], pair[1])
		tab, err := Compare(rs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.Rows {
			if d := r.Deltas[1]; d != nil && (d.Better || d.mark() != "" || !strings.HasPrefix(d.Verdict, "no verdict")) {
				t.Errorf("%v %s %s: verdict %q, better %v; want no verdict", pair, r.Step, r.Name, d.Verdict, d.Better)
			}
		}
		for _, b := range tab.Summary {
			if b.Verdict[1] == "better" || b.Verdict[1] == "worse" {
				t.Errorf("%v summary %s: %q", pair, b.Title, b.Verdict[1])
			}
		}
		var out bytes.Buffer
		for _, f := range Formats {
			if err := tab.Write(&out, f); err != nil {
				t.Fatal(err)
			}
		}
		if err := HTML(&out, tab, rs); err != nil {
			t.Fatal(err)
		}
		if m := verdictWords.FindString(out.String()); m != "" {
			t.Errorf("%v: a renderer says %q of single runs", pair, m)
		}
	}
}

// Repeated steps are tested: a clear shift is significant, identical
// values are "~".
func TestRepeatsAreTested(t *testing.T) {
	tab, err := Compare(load(t, "repeats-a", "repeats-b"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Row{}
	for _, r := range tab.Rows {
		byName[r.Name] = r
	}
	nopm := byName["nopm"]
	if nopm.Values[0].N != 5 || nopm.Values[0].Center != 1010 {
		t.Errorf("NOPM base %+v, want the median of 5", nopm.Values[0])
	}
	if d := nopm.Deltas[1]; d.P == nil || *d.P >= Alpha || d.Noise {
		t.Errorf("NOPM +25%% with 5 repeats a side is not significant: %+v", d)
	}
	if d := byName["new_order.p90_ms"].Deltas[1]; !d.Noise {
		t.Errorf("identical p90s are not within noise: %+v", d)
	}
	// The verdict reaches the summary and the page's colours.
	var bar *Bar
	for i := range tab.Summary {
		if tab.Summary[i].Metric == "nopm" {
			bar = &tab.Summary[i]
		}
	}
	if bar == nil || bar.Verdict[1] != "better" {
		t.Fatalf("NOPM's bar %+v, want better", bar)
	}
	var page bytes.Buffer
	if err := HTML(&page, tab, load(t, "repeats-a", "repeats-b")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<rect class="good"`) {
		t.Error("a significant better is not drawn green")
	}
}

func TestNoCommonStep(t *testing.T) {
	_, err := Compare(load(t, "device-a", "oltp-base"))
	var nc *NoCommonStepError
	if !errors.As(err, &nc) {
		t.Fatalf("Compare = %v, want NoCommonStepError", err)
	}
}

// The HTML page opens in Chromium with its curves drawn and the labels
// shown as text (oltp-xss's is a script). The quick pair holds the device
// curves the device pair would.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := browsertest.New(t)
	for _, p := range [][2]string{{"study-a", "study-b"}, {"oltp-base", "oltp-xss"}, {"quick-a", "quick-b"}} {
		t.Run(p[0], func(t *testing.T) {
			rs := load(t, p[0], p[1])
			tab, err := Compare(rs)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := HTML(&b, tab, rs); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "compare.html")
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			res := browser.Open(t, file)
			if len(res.Errors) > 0 || len(res.Dialogs) > 0 || len(res.Unrendered) > 0 {
				t.Errorf("errors %q, dialogs %q, undrawn %v", res.Errors, res.Dialogs, res.Unrendered)
			}
			if len(res.Charts) == 0 {
				t.Error("no overlaid chart")
			}
			for id, drawn := range res.Charts {
				if drawn < 0.01 {
					t.Errorf("chart %s is blank", id)
				}
			}
			for _, r := range rs {
				if !strings.Contains(res.Text, r.Label) {
					t.Errorf("the label %q is not shown as text", r.Label)
				}
			}
		})
	}
}

// A step whose host evidence differs between the runs gets a footnote
// with the two figures; jitter, or a verdict the rules could not reach,
// does not.
func TestHostContentionFootnote(t *testing.T) {
	for _, c := range []struct {
		name         string
		busyA, busyB float64
		limA, limB   string
		want         []string // in the footnote; none when empty
	}{
		{"another load", 13.9, 81.7, "storage", "storage", []string{"CPU busy 13.9% in device-a against 81.7% in device-b"}},
		{"jitter", 20, 30, "storage", "storage", nil},
		{"host verdict", 15, 16, "storage", "host", []string{"limited by storage in device-a, by host in device-b", "another load on the host limited it in device-b (processes outside calibra used 45% of the CPUs)"}},
		{"unknown is no verdict", 15, 16, "unknown", "storage", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := load(t, "device-a", "device-b")
			for i, set := range []struct {
				busy float64
				lim  string
			}{{c.busyA, c.limA}, {c.busyB, c.limB}} {
				st := &rs[i].Steps[0]
				busy := set.busy
				st.Observe.CPUBusyPct, st.LimitedBy = &busy, set.lim
				st.LimitedByEvidence = &results.Evidence{Rule: "processes outside calibra used 45% of the CPUs"}
			}
			tab, err := Compare(rs)
			if err != nil {
				t.Fatal(err)
			}
			s := tab.Steps[0]
			if len(c.want) == 0 {
				if s.Doubtful != "" {
					t.Errorf("doubtful: %s", s.Doubtful)
				}
				return
			}
			if s.Footnote == 0 {
				t.Fatalf("no footnote; footnotes %q", tab.Footnotes)
			}
			note := tab.Footnotes[s.Footnote-1]
			for _, w := range c.want {
				if !strings.Contains(note, w) {
					t.Errorf("footnote %q does not say %q", note, w)
				}
			}
			var text bytes.Buffer
			if err := tab.Write(&text, "text"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), fmt.Sprintf("(doubtful: note %d)", s.Footnote)) {
				t.Errorf("the step's group does not point at its note:\n%s", text.String())
			}
		})
	}
}

// With three repetitions a side (a study's repeat: 3) the test still
// decides: a verdict with its p, "~" here since three a side cannot reach
// p < 0.05, never the single run's "no verdict".
func TestThreeRepeatsAreTested(t *testing.T) {
	rs := load(t, "repeats-a", "repeats-b")
	for i := range rs {
		rs[i].Steps = rs[i].Steps[:3]
	}
	tab, err := Compare(rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if d := r.Deltas[1]; d == nil || d.P == nil || d.Verdict != "~" || r.Values[0].N != 3 {
			t.Errorf("%s: %+v, want a tested ~ of 3 a side", r.Name, d)
		}
	}
}

// Runs of two engines get one line saying so, not one per setting each
// engine has and the other lacks; runs of one engine still name the
// setting that differs.
func TestEngineSettingsFootnotes(t *testing.T) {
	for _, c := range []struct {
		name     string
		engineB  string
		settingB map[string]string
		want     string
		unwanted string
	}{
		{"two engines", "mariadb", map[string]string{"innodb_flush_method": "O_DIRECT"}, "runs are on different engines (postgresql, mariadb)", "setting innodb_flush_method"},
		{"one engine", "postgresql", map[string]string{"shared_buffers": "2GB"}, "runs differ in setting shared_buffers (1GB vs 2GB)", "different engines"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := load(t, "device-a", "device-b")
			rs[0].Meta.Engine = &results.Engine{Name: "postgresql", Version: "15", Settings: map[string]string{"shared_buffers": "1GB"}}
			rs[1].Meta.Engine = &results.Engine{Name: c.engineB, Version: "15", Settings: c.settingB}
			tab, err := Compare(rs)
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(tab.Footnotes, "\n")
			if !strings.Contains(all, c.want) || strings.Contains(all, c.unwanted) {
				t.Errorf("footnotes want %q, not %q:\n%s", c.want, c.unwanted, all)
			}
		})
	}
}

// Two engines meet different limits by their nature: that alone casts no
// doubt on a step, while another load on the host still does.
func TestDoubtAcrossEngines(t *testing.T) {
	rs := load(t, "device-a", "device-b")
	for i, name := range []string{"postgresql", "mariadb"} {
		rs[i].Meta.Engine = &results.Engine{Name: name}
		st := &rs[i].Steps[0]
		busy := []float64{15, 80}[i]
		st.Observe.CPUBusyPct, st.LimitedBy = &busy, []string{"lock", "cache"}[i]
	}
	tab, err := Compare(rs)
	if err != nil {
		t.Fatal(err)
	}
	if s := tab.Steps[0]; s.Doubtful != "" {
		t.Errorf("a step of two engines limited differently is doubtful: %s", s.Doubtful)
	}
	rs[1].Steps[0].LimitedBy = "host"
	rs[1].Steps[0].LimitedByEvidence = &results.Evidence{Rule: "processes outside calibra used 45% of the CPUs"}
	if tab, err = Compare(rs); err != nil {
		t.Fatal(err)
	}
	if s := tab.Steps[0]; !strings.Contains(s.Doubtful, "another load on the host limited it") {
		t.Errorf("doubt %q: want the other load named", s.Doubtful)
	}
}

// Runs that drove different numbers of servers get their figures drawn
// against that number; runs on as many servers do not.
func TestScalingChartAgainstServers(t *testing.T) {
	for _, c := range []struct {
		instances []int
		want      bool
	}{{[]int{0, 2, 4}, true}, {[]int{0, 0}, false}, {[]int{2, 2}, false}} {
		var rs []Run
		for _, n := range c.instances {
			r := load(t, "oltp-base")[0]
			e := *r.Meta.Engine
			e.Instances = n
			r.Meta.Engine = &e
			rs = append(rs, r)
		}
		charts, _ := overlays(rs)
		var got []string
		for _, ch := range charts {
			if strings.HasPrefix(ch.ID, "servers-") {
				got = append(got, ch.ID)
				if n := len(ch.Series[0].X); n != len(rs) {
					t.Errorf("%v: %s has %d points, want one a run", c.instances, ch.ID, n)
				}
			}
		}
		if (len(got) == 2) != c.want {
			t.Errorf("instances %v: charts %v, want the scaling charts %v", c.instances, got, c.want)
		}
	}
}
