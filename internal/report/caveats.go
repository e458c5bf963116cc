package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// advice says what to do about a figure limited by something other than
// the storage, by what limited it.
var advice = map[string]string{
	"cpu":    "it shows what the CPUs allowed, not what the storage can do: a machine with more CPU, or a lighter load, would measure the storage",
	"driver": "calibra's own CPU set the pace: fewer users or jobs per CPU, or a separate load machine, would measure the database",
	"host":   "another load shared the machine: repeat the run on a quiet host before trusting it or comparing it",
}

// Caveats are the run's caveats, each said once, in the order a reader
// meets them: the run's own, then each step's (a caveat several steps
// share names them all).
func Caveats(run *results.Run) []string {
	var order []string
	where := map[string][]string{}
	add := func(step, text string) {
		if _, seen := where[text]; !seen {
			order = append(order, text)
		}
		if step != "" && !slices.Contains(where[text], step) {
			where[text] = append(where[text], step)
		}
	}
	for _, w := range run.Warnings {
		add("", w)
	}
	if l := run.Meta.Limits; l != nil && l.NotApplied["limits"] != "" {
		add("", fmt.Sprintf("the cache and storage limits were not applied (%s): reads may have come from the page cache; run as root on a machine with cgroups to bound it", l.NotApplied["limits"]))
	}
	for _, st := range run.Steps {
		name := st.Name
		if name == "" {
			name = st.Kind
		}
		if a, ok := advice[st.LimitedBy]; ok && st.LimitedByEvidence != nil {
			add(name, fmt.Sprintf("limited by %s (%s): %s", st.LimitedBy, st.LimitedByEvidence.Rule, a))
		}
		switch b := st.Body.(type) {
		case *results.OLTP:
			for _, w := range b.Warnings {
				add(name, w)
			}
		case *results.IOCal:
			if b.CacheDominated != "" {
				add(name, "cache-dominated: "+b.CacheDominated)
			}
		}
	}
	out := make([]string, len(order))
	for i, text := range order {
		out[i] = text
		if steps := where[text]; len(steps) > 0 {
			out[i] = strings.Join(steps, ", ") + ": " + text
		}
	}
	return out
}

// verdictTable is the study's thresholds, judged; nil without any.
func verdictTable(vs []results.Verdict) *Table {
	if len(vs) == 0 {
		return nil
	}
	t := &Table{Caption: "Thresholds", Headline: true, Head: []string{"threshold", "step", "value", "verdict"}}
	for _, v := range vs {
		verdict := verdictCell(v.OK, "pass", "FAIL")
		if v.Reason != "" {
			verdict.Text += ": " + v.Reason
		}
		row := cells(v.Threshold, v.Step, NumPtr(v.Value))
		row[1].Class = "t"
		t.Rows = append(t.Rows, append(row, verdict))
	}
	return t
}

// repeatTable is each repeated step's medians with their spread; nil
// without repeats.
func repeatTable(reps []results.Repeats) *Table {
	if len(reps) == 0 {
		return nil
	}
	t := &Table{Caption: "Repeated steps: medians and spread", Headline: true, Head: []string{"step", "metric", "n", "median", "min", "max", "spread %"}}
	for _, r := range reps {
		for _, m := range r.Metrics {
			row := cells(fmt.Sprintf("%d %s", r.StudyStep, r.Name), m.Name, fmt.Sprint(len(m.Values)), Num(m.Median)+" "+m.Unit, Num(m.Min), Num(m.Max), NumPtr(m.SpreadPct))
			row[1].Class = "t"
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}
