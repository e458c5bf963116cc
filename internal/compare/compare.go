// Package compare sets runs side by side: every metric they share, aligned
// by step and name, with its direction, the delta against the first run
// (the base) and, where steps were repeated, the median, its spread and
// benchstat's significance test (Mann-Whitney U, p < 0.05). It reads only
// results.json (and timeseries.csv for the overlaid curves).
package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/calibra-bench/calibra/internal/results"
)

var nan = math.NaN()

// Alpha is the significance level of the U test, benchstat's default.
const Alpha = 0.05

// Run is one compared run.
type Run struct {
	Dir   string
	Label string // the run's label, or its directory's name
	*results.Run
}

// Metric names one compared figure.
type Metric struct {
	Step  string `json:"step"` // kind/name
	Name  string `json:"metric"`
	Title string `json:"title"` // the name a person reads: "NOPM", "4k random read IOPS (qd16)"
	Unit  string `json:"unit,omitempty"`
	// Better is the metric's good way, results.HigherIsBetter or
	// LowerIsBetter, or "" for evidence with no good way (CPU busy, I/O
	// wait): its change is shown, never judged.
	Better string `json:"better,omitempty"`
	// Headline marks the figures the studies headline, summarised first.
	Headline bool `json:"headline,omitempty"`
}

// Higher says whether a higher value is better.
func (m Metric) Higher() bool { return m.Better == results.HigherIsBetter }

// Arrow is the metric's direction: ↑ higher is better, ↓ lower, nothing
// for evidence with no good way.
func (m Metric) Arrow() string {
	switch m.Better {
	case results.HigherIsBetter:
		return "↑"
	case results.LowerIsBetter:
		return "↓"
	}
	return ""
}

// Value is a metric in one run: its repetitions summarised.
type Value struct {
	N      int       `json:"n"`
	Center float64   `json:"center"` // the value, or the median of repetitions
	Lo     float64   `json:"min"`
	Hi     float64   `json:"max"`
	Values []float64 `json:"values"`
	// SpreadPct is ± around the center: the 95% confidence interval of the
	// median when there are 6 or more repetitions, else half the range.
	SpreadPct *float64 `json:"spread_pct,omitempty"`
	// AtLeast marks a lower bound: users within an SLA that no load broke
	// (the highest load tried), in at least one repetition.
	AtLeast bool `json:"at_least,omitempty"`
}

// Delta is a run's change against the base.
type Delta struct {
	Pct *float64 `json:"pct"` // null when the base is zero
	// P is the U test's p-value, with repetitions on both sides.
	P *float64 `json:"p,omitempty"`
	// Noise is set when the test finds no significant difference ("~").
	Noise bool `json:"within_noise,omitempty"`
	// Better says whether the change goes the metric's good way, and is set
	// only with a verdict: a single run's delta is a value, not a result.
	Better bool `json:"better"`
	// Verdict is "better", "worse", "~" (within noise), "differs" (a
	// significant change of a metric with no good way), "no verdict
	// (n=1)" when either side has a single run: one run on a shared machine
	// cannot tell a change from noise, so no delta is called better or
	// worse then; or NoVerdictBound for a lower bound.
	Verdict string `json:"verdict"`
}

// NoVerdict is the verdict of a delta with a single run on either side;
// NoVerdictBound of a delta from a lower bound, which says nothing of
// the change.
const (
	NoVerdict      = "no verdict (n=1)"
	NoVerdictBound = "no verdict (SLA not reached)"
)

// Row is one metric across the runs; a missing value is nil.
type Row struct {
	Metric
	Values []*Value `json:"values"`
	Deltas []*Delta `json:"deltas"` // [0] is nil: the base
}

// Table is the comparison: the headline summary, then every row grouped
// by step (Steps' order).
type Table struct {
	Runs      []RunInfo  `json:"runs"`
	Summary   []Bar      `json:"summary"`
	Steps     []StepInfo `json:"steps"`
	Rows      []Row      `json:"rows"`
	Footnotes []string   `json:"footnotes,omitempty"`
}

// StepInfo is what a step's group says besides its figures.
type StepInfo struct {
	Step string `json:"step"`
	// LimitedBy is what limited the step in each run ("" when not said);
	// repetitions that disagree are joined with "/".
	LimitedBy []string `json:"limited_by"`
	// Doubtful says why the step's comparison may not be the storage's
	// doing; Footnote is its number among the footnotes (from 1).
	Doubtful string `json:"doubtful,omitempty"`
	Footnote int    `json:"footnote,omitempty"`
}

// RunInfo names a run in the table.
type RunInfo struct {
	Label  string `json:"label"`
	Dir    string `json:"dir"`
	Status string `json:"status"`
}

// NoCommonStepError means the runs share no step to compare.
type NoCommonStepError struct{ Base, Other string }

func (e *NoCommonStepError) Error() string {
	return fmt.Sprintf("the runs %s and %s share no step (same kind and name) to compare", e.Base, e.Other)
}

// Compare builds the table; runs[0] is the base.
func Compare(runs []Run) (*Table, error) {
	t := &Table{}
	per := make([]map[string][]float64, len(runs))
	bound := make([]map[string]bool, len(runs))
	limits := make([]map[string][]string, len(runs))
	hostWhy := make([]map[string]string, len(runs)) // the rule of a host verdict
	metrics := map[string]Metric{}
	var order, steps []string
	load := rampLoad(runs)
	alias, renamed := stepAliases(runs)
	for i, r := range runs {
		t.Runs = append(t.Runs, RunInfo{Label: r.Label, Dir: r.Dir, Status: r.Status})
		per[i] = map[string][]float64{}
		bound[i] = map[string]bool{}
		limits[i] = map[string][]string{}
		hostWhy[i] = map[string]string{}
		for _, st := range r.Steps {
			if a, ok := alias[st.Kind]; ok {
				st.Name = a
			}
			for _, f := range extract(st, load) {
				k := f.Step + "\x00" + f.Name
				if _, ok := metrics[k]; !ok {
					metrics[k] = f.Metric
					order = append(order, k)
				}
				if !slices.Contains(steps, f.Step) {
					steps = append(steps, f.Step)
				}
				per[i][k] = append(per[i][k], f.value)
				bound[i][k] = bound[i][k] || f.atLeast
			}
			if step := st.Kind + "/" + st.Name; st.LimitedBy != "" && !slices.Contains(limits[i][step], st.LimitedBy) {
				limits[i][step] = append(limits[i][step], st.LimitedBy)
				if st.LimitedBy == "host" && st.LimitedByEvidence != nil {
					hostWhy[i][step] = st.LimitedByEvidence.Rule
				}
			}
		}
	}
	for i := 1; i < len(runs); i++ {
		if !shareStep(per[0], per[i]) {
			return nil, &NoCommonStepError{Base: runs[0].Label, Other: runs[i].Label}
		}
	}
	byStep := map[string][]Row{}
	for _, k := range order {
		row := Row{Metric: metrics[k], Values: make([]*Value, len(runs)), Deltas: make([]*Delta, len(runs))}
		shared := 0
		for i := range runs {
			if v, ok := per[i][k]; ok {
				row.Values[i] = summarise(v)
				row.Values[i].AtLeast = bound[i][k]
				shared++
			}
		}
		if shared < 2 || row.Values[0] == nil {
			continue
		}
		for i := 1; i < len(runs); i++ {
			if row.Values[i] != nil {
				row.Deltas[i] = delta(row.Metric, per[0][k], per[i][k], row.Values[0], row.Values[i])
			}
		}
		byStep[row.Step] = append(byStep[row.Step], row)
	}
	t.Footnotes = append(renamed, footnotes(runs)...)
	groupSteps(t, runs, steps, byStep, limits, hostWhy)
	applyMethods(t, stepMethods(runs, alias))
	t.Summary = summary(t)
	return t, nil
}

// groupSteps appends the rows grouped by step, in the order the steps
// first appear (the base's layer order), each step with what limited it
// in each run and, when its comparison is doubtful, a footnote saying why.
func groupSteps(t *Table, runs []Run, steps []string, byStep map[string][]Row, limits []map[string][]string, hostWhy []map[string]string) {
	for _, step := range steps {
		rows := byStep[step]
		if len(rows) == 0 {
			continue
		}
		info := StepInfo{Step: step}
		var host []string
		for i := range runs {
			info.LimitedBy = append(info.LimitedBy, strings.Join(limits[i][step], "/"))
			host = append(host, hostWhy[i][step])
		}
		if why := doubt(t.Runs, info.LimitedBy, host, rows, len(engineNames(runs)) > 1); why != "" {
			t.Footnotes = append(t.Footnotes, fmt.Sprintf("%s: the comparison of this step is doubtful: %s", step, why))
			info.Doubtful, info.Footnote = why, len(t.Footnotes)
		}
		t.Steps = append(t.Steps, info)
		t.Rows = append(t.Rows, rows...)
	}
}

// stepAliases aligns steps whose names differ only because their names
// carry parameters ("oltp 1 warehouses 2 users" vs "... 4 users"): when
// every run has steps of a kind under one name each, they are compared
// under the base's name, with a footnote.
func stepAliases(runs []Run) (map[string]string, []string) {
	names := make([]map[string][]string, len(runs))
	var kinds []string
	for i, r := range runs {
		names[i] = map[string][]string{}
		for _, st := range r.Steps {
			if i == 0 && len(names[0][st.Kind]) == 0 {
				kinds = append(kinds, st.Kind)
			}
			if !slices.Contains(names[i][st.Kind], st.Name) {
				names[i][st.Kind] = append(names[i][st.Kind], st.Name)
			}
		}
	}
	alias := map[string]string{}
	var notes []string
	for _, k := range kinds {
		var all []string
		one := true
		for i := range runs {
			one = one && len(names[i][k]) == 1
			all = append(all, strings.Join(names[i][k], ","))
		}
		if !one || all[0] == "" {
			continue
		}
		same := true
		for _, n := range all {
			same = same && n == all[0]
		}
		if !same {
			alias[k] = all[0]
			notes = append(notes, fmt.Sprintf("the %s steps are compared though their names differ (%s)", k, strings.Join(all, " vs ")))
		}
	}
	return alias, notes
}

func shareStep(a, b map[string][]float64) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

func summarise(v []float64) *Value {
	vals := append([]float64(nil), v...)
	s := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
	out := &Value{N: len(vals), Values: s.Values, Lo: s.Values[0], Hi: s.Values[len(s.Values)-1]}
	sum := benchmath.AssumeNothing.Summary(s, 0.95)
	out.Center = sum.Center
	if len(vals) < 2 || out.Center == 0 {
		return out
	}
	lo, hi := sum.Lo, sum.Hi
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = out.Lo, out.Hi
	}
	pct := 100 * math.Max(hi/out.Center-1, 1-lo/out.Center)
	out.SpreadPct = &pct
	return out
}

func delta(m Metric, base, other []float64, bv, ov *Value) *Delta {
	d := &Delta{Verdict: NoVerdict}
	var better bool
	if bv.Center != 0 {
		pct := (ov.Center/bv.Center - 1) * 100
		d.Pct = &pct
		better = (pct > 0) == m.Higher() && pct != 0
	}
	if bv.AtLeast || ov.AtLeast {
		d.Verdict = NoVerdictBound
		return d
	}
	if len(base) < 2 || len(other) < 2 {
		return d
	}
	p := UTest(base, other)
	d.P = &p
	d.Noise = p >= Alpha
	switch {
	case d.Noise || d.Pct == nil || *d.Pct == 0:
		d.Verdict = "~"
	case m.Better == "":
		d.Verdict = "differs"
	case better:
		d.Better, d.Verdict = true, "better"
	default:
		d.Verdict = "worse"
	}
	return d
}

// UTest is benchstat's test of a difference between two samples, the
// one every delta with repetitions gets: the Mann-Whitney U test,
// two-sided; it returns the p-value.
func UTest(base, other []float64) float64 {
	a := benchmath.NewSample(append([]float64(nil), base...), &benchmath.DefaultThresholds)
	b := benchmath.NewSample(append([]float64(nil), other...), &benchmath.DefaultThresholds)
	return benchmath.AssumeNothing.Compare(a, b).P
}

// MinP is the smallest p-value UTest can give two samples of n1 and n2
// values (every value of one below every value of the other): when it is
// not below Alpha, no difference between such samples can be significant
// (3 a side: 0.1).
func MinP(n1, n2 int) float64 {
	a, b := make([]float64, n1), make([]float64, n2)
	for i := range a {
		a[i] = float64(i)
	}
	for i := range b {
		b[i] = float64(n1 + i)
	}
	return UTest(a, b)
}

// footnotes name what differs between the runs besides the storage under
// test, which would mix other effects into the deltas.
func footnotes(runs []Run) []string {
	var out []string
	differ := func(what string, get func(r Run) string) {
		vals := make([]string, len(runs))
		same := true
		for i, r := range runs {
			vals[i] = get(r)
			same = same && vals[i] == vals[0]
		}
		if !same {
			out = append(out, fmt.Sprintf("runs differ in %s (%s): the deltas mix its effect with the storage's", what, strings.Join(vals, " vs ")))
		}
	}
	differ("engine version", func(r Run) string {
		if r.Meta.Engine == nil {
			return "none"
		}
		return r.Meta.Engine.Name + " " + r.Meta.Engine.Version
	})
	differ("calibra version", func(r Run) string { return r.Meta.ToolVersion })
	differ("host", func(r Run) string {
		return fmt.Sprintf("%d CPUs, %.0f GiB", r.Meta.Host.CPUs, float64(r.Meta.Host.MemBytes)/(1<<30))
	})
	differ("warehouses", func(r Run) string { return warehouses(r) })
	if engines := engineNames(runs); len(engines) > 1 {
		// Each engine has settings of its own: a line per setting would
		// only repeat that the engines differ.
		out = append(out, fmt.Sprintf("runs are on different engines (%s): their settings are each engine's own and are not set side by side; compare NOPM, ART, MB/s and query times across them, and read the engines' own counters per run", strings.Join(engines, ", ")))
	} else {
		for _, k := range unionKeys(runs, func(r Run) map[string]string {
			if r.Meta.Engine == nil {
				return nil
			}
			return r.Meta.Engine.Settings
		}) {
			if EphemeralSetting(k) {
				continue
			}
			differ("setting "+k, func(r Run) string {
				if r.Meta.Engine == nil {
					return "-"
				}
				return orDash(r.Meta.Engine.Settings[k])
			})
		}
	}
	differ("study command", func(r Run) string { return fmt.Sprint(r.Meta.Study["command"]) })
	for _, k := range unionKeys(runs, studyFlags) {
		if ownFlag[k] {
			continue
		}
		differ("flag --"+k, func(r Run) string { return orDash(studyFlags(r)[k]) })
	}
	for _, r := range runs {
		if r.Status != results.StatusComplete {
			out = append(out, fmt.Sprintf("run %s is %s: its figures cover only what was measured before it stopped", r.Label, r.Status))
		}
	}
	return out
}

// engineNames lists the distinct engines of the runs, in order.
func engineNames(runs []Run) []string {
	var names []string
	for _, r := range runs {
		if r.Meta.Engine != nil && !slices.Contains(names, r.Meta.Engine.Name) {
			names = append(names, r.Meta.Engine.Name)
		}
	}
	return names
}

// EphemeralSetting reports whether an engine setting differs between any
// two runs (a port, a socket's or a file's path, which follow --path and
// --wal-path, which the flags' lines name): no difference to report. The
// runner sets it from the engines' descriptors, so compare names none.
var EphemeralSetting = func(string) bool { return false }

// ownFlag are flags that name a run rather than change what it measures;
// --path is the storage under test, the thing compared.
var ownFlag = map[string]bool{"out": true, "label": true, "path": true, "progress": true, "json": true}

func studyFlags(r Run) map[string]string {
	out := map[string]string{}
	if f, ok := r.Meta.Study["flags"].(map[string]any); ok {
		for k, v := range f {
			out[k] = fmt.Sprint(v)
		}
	}
	return out
}

func unionKeys(runs []Run, get func(Run) map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, r := range runs {
		for k := range get(r) {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func warehouses(r Run) string {
	var ws []string
	for _, st := range r.Steps {
		switch b := st.Body.(type) {
		case *results.OLTP:
			ws = append(ws, fmt.Sprint(b.Warehouses))
		case *results.Ramp:
			ws = append(ws, fmt.Sprint(b.Warehouses))
		}
	}
	return orDash(strings.Join(dedupe(ws), ","))
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}
