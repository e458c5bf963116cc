package results

import "fmt"

// Baseline is a run judged against the results store's earlier runs of
// the same study on the same target (calibra run --baseline): per headline
// figure, the medians on each side, the change, the Mann-Whitney U test's
// p-value, and whether it regressed beyond the allowed share.
type Baseline struct {
	// Spec is what was asked: "last" or a label.
	Spec string `json:"spec"`
	// Runs are the store's run ids that made the baseline, newest first;
	// Labels their labels, each once.
	Runs   []string `json:"runs"`
	Labels []string `json:"labels,omitempty"`
	// Target is what "the same target" matched, in words.
	Target string `json:"target"`
	// MaxRegressionPct is the change in the bad direction allowed before
	// a significant one fails the run; Alpha the test's level.
	MaxRegressionPct float64 `json:"max_regression_pct"`
	Alpha            float64 `json:"alpha"`
	// Verdict is "regressed", "pass" or "no verdict"; Reason says why in a
	// sentence when there is no verdict (or which figures regressed).
	Verdict   string           `json:"verdict"`
	Reason    string           `json:"reason,omitempty"`
	Regressed bool             `json:"regressed"`
	Figures   []BaselineFigure `json:"figures,omitempty"`
}

// Baseline verdicts.
const (
	BaselineRegressed = "regressed"
	BaselinePass      = "pass"
	BaselineNone      = "no verdict"
)

// BaselineFigure is one headline figure against the baseline. Values are
// medians over the repeats (the run's) and over every repeat of every
// baseline run (the baseline's).
type BaselineFigure struct {
	Step       string   `json:"step"` // kind/name
	Metric     string   `json:"metric"`
	Title      string   `json:"title"`
	Unit       string   `json:"unit,omitempty"`
	Better     string   `json:"better"`
	BaseMedian float64  `json:"base_median"`
	RunMedian  float64  `json:"run_median"`
	DeltaPct   *float64 `json:"delta_pct"` // null when the base is zero
	P          *float64 `json:"p"`         // null without a test (n < 3 a side)
	BaseN      int      `json:"base_n"`
	RunN       int      `json:"run_n"`
	Regressed  bool     `json:"regressed"`
	// Verdict is "regressed", "worse within the allowance", "worse within
	// noise", "better", "~" or "no verdict (...)": the figure's own.
	Verdict string `json:"verdict"`
}

// Summary is the verdict in one line: what the run was judged against
// and what came of it.
func (b *Baseline) Summary() string {
	s := fmt.Sprintf("against the baseline %s (%s): %s", b.Spec, Plural(len(b.Runs), "stored run"), b.Verdict)
	if b.Reason != "" {
		s += ": " + b.Reason
	}
	return s
}

func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// BaselineHead is the header of the figures' table.
var BaselineHead = []string{"figure", "run", "baseline", "change", "p", "n (run, baseline)", "verdict"}

// Rows are the figures as the table's cells.
func (b *Baseline) Rows() [][]string {
	var out [][]string
	for _, f := range b.Figures {
		unit := ""
		if f.Unit != "" {
			unit = " " + f.Unit
		}
		change := "-"
		if f.DeltaPct != nil {
			change = fmt.Sprintf("%+.1f%%", *f.DeltaPct)
		}
		p := "-"
		if f.P != nil {
			p = fmt.Sprintf("%.3f", *f.P)
		}
		title := f.Title
		if f.Step != "" {
			title += " [" + f.Step + "]"
		}
		out = append(out, []string{title, Num(f.RunMedian) + unit, Num(f.BaseMedian) + unit, change, p,
			fmt.Sprintf("%d, %d", f.RunN, f.BaseN), f.Verdict})
	}
	return out
}
