package compare

import (
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// NoVerdictMethod is the verdict of a delta between device steps measured
// by different methods: a steady-state point against a fresh-out-of-box
// one differs by method before it differs by storage.
const NoVerdictMethod = "no verdict (methods differ)"

// Device methods, as the comparison names them.
const (
	methodSteady = "steady state"
	methodFOB    = "fresh out of box"
)

// deviceMethod names how a device step was measured; "" for other kinds.
// A step before calibra recorded the method was fresh out of box.
func deviceMethod(st results.Step) string {
	d, ok := st.Body.(*results.Device)
	if !ok {
		return ""
	}
	if d.SteadyState != nil {
		return methodSteady
	}
	return methodFOB
}

// stepMethods is each run's method of each device step (kind/name, after
// the aliases), joined with "/" when a run's repetitions differ.
func stepMethods(runs []Run, alias map[string]string) []map[string]string {
	out := make([]map[string]string, len(runs))
	for i, r := range runs {
		out[i] = map[string]string{}
		for _, st := range r.Steps {
			if a, ok := alias[st.Kind]; ok {
				st.Name = a
			}
			m := deviceMethod(st)
			if m == "" {
				continue
			}
			k := st.Kind + "/" + st.Name
			if old := out[i][k]; old != "" && !strings.Contains(old, m) {
				m = old + "/" + m
			} else if old != "" {
				m = old
			}
			out[i][k] = m
		}
	}
	return out
}

// applyMethods takes the verdict from every delta of a device step whose
// method differs from the base's, and says so in a footnote: the figures
// are shown, but neither is called better or worse.
func applyMethods(t *Table, methods []map[string]string) {
	said := map[string]bool{}
	for _, row := range t.Rows {
		for i, d := range row.Deltas {
			base, other := methods[0][row.Step], methods[i][row.Step]
			if d == nil || base == other {
				continue
			}
			d.Verdict, d.Better, d.Noise = NoVerdictMethod, false, false
			if key := fmt.Sprint(row.Step, i); !said[key] {
				said[key] = true
				t.Footnotes = append(t.Footnotes, fmt.Sprintf("%s: %s was measured %s and %s %s; they differ in method, so no delta of this step is called better or worse",
					row.Step, t.Runs[0].Label, method(base), t.Runs[i].Label, method(other)))
			}
		}
	}
}

func method(m string) string {
	if m == methodSteady {
		return "at steady state (SNIA PTS)"
	}
	if m == methodFOB {
		return "fresh out of box (a first look)"
	}
	return "by mixed methods (" + m + ")"
}
