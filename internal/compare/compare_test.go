package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/report/browsertest"
)

const runs = "../results/testdata/runs"

func load(t *testing.T, names ...string) []Run {
	t.Helper()
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, filepath.Join(runs, n))
	}
	r, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The pairs: real oltp and device runs, every hand-made layer with an
// interrupted run and another engine version, and repeated steps.
var pairs = [][2]string{{"oltp-base", "oltp-xss"}, {"device-a", "device-b"}, {"study-a", "study-b"}, {"repeats-a", "repeats-b"}}

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

// The cache study's headline comes first when the runs have ramps.
func TestRampHeadlineFirst(t *testing.T) {
	tab, err := Compare(load(t, "study-a", "study-b"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tab.Rows[:3] {
		got = append(got, r.Name)
	}
	if strings.Join(got, "; ") != "max_tps; art_ms_at_40_users; max_users_within_sla" {
		t.Errorf("first rows %q", got)
	}
	if d := tab.Rows[0].Deltas[1]; d == nil || d.Pct == nil || *d.Pct < 33.3 || *d.Pct > 33.4 || d.Better || d.Verdict != NoVerdict {
		t.Errorf("max TPS delta %+v: want +33.3%% as a value of single runs, with no verdict", d)
	}
}

// Single runs give values, never a better or worse: one run on a shared
// machine cannot tell a change from noise.
func TestSingleRunsGiveNoVerdict(t *testing.T) {
	for _, pair := range [][2]string{{"study-a", "study-b"}, {"device-a", "device-b"}} {
		tab, err := Compare(load(t, pair[0], pair[1]))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tab.Rows {
			if d := r.Deltas[1]; d != nil && (d.Better || d.mark() != "" || d.Verdict != NoVerdict) {
				t.Errorf("%v %s %s: verdict %q, better %v; want no verdict", pair, r.Step, r.Name, d.Verdict, d.Better)
			}
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
}

func TestNoCommonStep(t *testing.T) {
	_, err := Compare(load(t, "device-a", "oltp-base"))
	var nc *NoCommonStepError
	if !errors.As(err, &nc) {
		t.Fatalf("Compare = %v, want NoCommonStepError", err)
	}
}

// The HTML page opens in Chromium with its curves drawn and the labels
// shown as text.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := browsertest.New(t)
	for _, p := range [][2]string{{"study-a", "study-b"}, {"oltp-base", "oltp-xss"}, {"device-a", "device-b"}} {
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
