package compare

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/results"
)

// figure is one metric's value in one step.
type figure struct {
	Metric
	value float64
}

// extract lists a step's comparable figures: its metrics that have a
// direction (results.Metrics, the names thresholds use), the ramps' ART at
// the load every run reached instead of each run's own. Unmeasured figures
// are left out, never compared as zero.
func extract(st results.Step, load int) []figure {
	step := st.Kind + "/" + st.Name
	var out []figure
	for _, m := range results.Metrics(st) {
		if m.Better == "" || (st.Kind == results.KindRamp && m.Name == "art_at_ms") {
			continue
		}
		headline := st.Kind == results.KindRamp && (m.Name == "max_tps" || m.Name == "max_users_within_sla")
		out = append(out, figure{Metric{Step: step, Name: m.Name, Unit: m.Unit, Higher: m.Better == results.HigherIsBetter, Headline: headline}, m.Value})
	}
	if b, ok := st.Body.(*results.Ramp); ok && load > 0 {
		for _, s := range b.Steps {
			if s.Users == load {
				// The study's order: max TPS, ART at a load, users within the SLA.
				art := figure{Metric{Step: step, Name: fmt.Sprintf("art_ms_at_%d_users", load), Unit: "ms", Headline: true}, s.ARTMs}
				at := min(1, len(out))
				out = append(out[:at], append([]figure{art}, out[at:]...)...)
			}
		}
	}
	return out
}

// rampLoad is the user load at which ART is compared across the runs'
// ramps: the base's named load (art_at_users) if every run reached it,
// else the highest load every run's ramp reached.
func rampLoad(runs []Run) int {
	var sets []map[int]bool
	named := 0
	for i, r := range runs {
		loads := map[int]bool{}
		for _, st := range r.Steps {
			if b, ok := st.Body.(*results.Ramp); ok {
				for _, s := range b.Steps {
					loads[s.Users] = true
				}
				if i == 0 && b.ARTAtUsers != nil {
					named = *b.ARTAtUsers
				}
			}
		}
		if len(loads) == 0 {
			return 0
		}
		sets = append(sets, loads)
	}
	inAll := func(u int) bool {
		for _, s := range sets {
			if !s[u] {
				return false
			}
		}
		return true
	}
	if named > 0 && inAll(named) {
		return named
	}
	best := 0
	for u := range sets[0] {
		if u > best && inAll(u) {
			best = u
		}
	}
	return best
}
