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
	seen := map[string]bool{}
	add := func(step, text string) {
		if !seen[text] {
			seen[text] = true
			order = append(order, text)
		}
		if step != "" && !slices.Contains(where[text], step) {
			where[text] = append(where[text], step)
		}
	}
	host := hostLoad(run)
	for _, w := range run.Warnings {
		if host != "" && strings.HasPrefix(w, hostWarning) {
			w = host // every step's share of another load, in one caveat
		}
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
			if st.LimitedBy == "host" {
				add("", host) // it names its steps
			} else {
				add(name, fmt.Sprintf("limited by %s (%s): %s", st.LimitedBy, st.LimitedByEvidence.Rule, a))
			}
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
			for _, w := range b.Warnings {
				add(name, w)
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

// hostWarning begins the run's warning of another load during a step
// (runner.Session.keep), one a step.
const hostWarning = "another load on the host: "

// hostLoad is one caveat for another load on the host, whichever steps it
// came in (a run warning each, and a limit each it bounded): each step's
// share of the machine, the steps it limited and what to do; "" when
// there was none.
func hostLoad(run *results.Run) string {
	var during, limited []string
	var rule string
	for _, st := range run.Steps {
		name := st.Name
		if name == "" {
			name = st.Kind
		}
		warned := slices.ContainsFunc(run.Warnings, func(w string) bool {
			return strings.HasPrefix(w, hostWarning) && strings.Contains(w, fmt.Sprintf("during %s %q", st.Kind, st.Name))
		})
		if st.LimitedBy == "host" && st.LimitedByEvidence != nil {
			limited = append(limited, name)
			rule = st.LimitedByEvidence.Rule
			warned = true
		}
		if !warned {
			continue
		}
		if o := st.Observe; o != nil && o.CPUOutsidePct != nil {
			share := fmt.Sprintf("%.0f%%", *o.CPUOutsidePct)
			if len(during) == 0 {
				share += " of the machine"
			}
			during = append(during, share+" during "+name)
		} else {
			during = append(during, "a share of the machine during "+name)
		}
	}
	if len(during) == 0 {
		return ""
	}
	used := "processes outside calibra and the database used " + strings.Join(during, ", ")
	if len(limited) == 0 {
		return hostWarning + used + ": their figures may be lower and noisier than the storage allows; " + advice["host"]
	}
	if len(during) > 1 || rule == "" {
		rule = used
	}
	return fmt.Sprintf("%s: limited by host (%s): %s", strings.Join(limited, ", "), rule, advice["host"])
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
		row := cells(v.Threshold, v.Step, results.NumPtr(v.Value))
		row[1].Class = "t"
		t.Rows = append(t.Rows, append(row, verdict))
	}
	return t
}

// baselineTable is the run's headline figures against its baseline
// (--baseline); nil without any.
func baselineTable(b *results.Baseline) *Table {
	rows := b.Rows()
	if len(rows) == 0 {
		return nil
	}
	t := &Table{Caption: "Against the baseline", Headline: true, Head: results.BaselineHead}
	for _, r := range rows {
		row := cells(r...)
		row[0].Class, row[len(row)-1].Class = "t", "t"
		t.Rows = append(t.Rows, row)
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
			row := cells(fmt.Sprintf("%d %s", r.StudyStep, r.Name), m.Name, fmt.Sprint(len(m.Values)), results.Num(m.Median)+" "+m.Unit, results.Num(m.Min), results.Num(m.Max), results.NumPtr(m.SpreadPct))
			row[1].Class = "t"
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}
