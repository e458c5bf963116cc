package compare

// Bar is one headline figure's change in the summary: per run, its delta
// against the base in percent, the delta's verdict and its p ([0], the
// base, is empty).
type Bar struct {
	Title   string     `json:"title"`
	Step    string     `json:"step"`
	Metric  string     `json:"metric"`
	Better  string     `json:"better"`
	Pct     []*float64 `json:"pct"`
	Verdict []string   `json:"verdict"`
	P       []*float64 `json:"p"` // the test's p-value, with repetitions on both sides
}

// summary lists the headline figures in the table's order. A title two
// steps share (two OLTP steps' NOPM) is told apart by its step.
func summary(t *Table) []Bar {
	var out []Bar
	count := map[string]int{}
	for _, r := range t.Rows {
		if r.Headline {
			count[r.Title]++
		}
	}
	for _, r := range t.Rows {
		if !r.Headline {
			continue
		}
		b := Bar{Title: r.Title, Step: r.Step, Metric: r.Name, Better: r.Better, Pct: make([]*float64, len(r.Values)), Verdict: make([]string, len(r.Values)), P: make([]*float64, len(r.Values))}
		if count[r.Title] > 1 {
			b.Title += " (" + r.Step + ")"
		}
		for i, d := range r.Deltas {
			if d != nil {
				b.Pct[i], b.Verdict[i], b.P[i] = d.Pct, d.Verdict, d.P
			}
		}
		out = append(out, b)
	}
	return out
}
