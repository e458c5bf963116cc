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
	// LeftOut are the newer stored runs of the target that regressed and
	// no one accepted (calibra store accept): no baseline takes them.
	LeftOut []string `json:"left_out,omitempty"`
	// NoCopy counts the stored runs of the target passed over because the
	// store kept no copy of their results.json (recorded before it did).
	NoCopy int `json:"skipped_no_copy,omitempty"`
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
	// BaselineHostBusy: a figure would have regressed, but another load
	// on the host limited the run, so its storage was not judged. Such a
	// run enters no later baseline until accepted.
	BaselineHostBusy = "host busy"
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
	// PHolm is P adjusted for the figures tested together (Holm), the one
	// judged against Alpha.
	PHolm *float64 `json:"p_holm"`
	BaseN int      `json:"base_n"`
	RunN  int      `json:"run_n"`
	// Bound is the condition a value had to meet ("p99 ≤ 1 ms"); the
	// Missed counts are the repeats with no point that met it, counted in
	// the n's and ranked below every value that did. RunMedian and
	// BaseMedian are over the values that met it.
	Bound      string `json:"bound,omitempty"`
	RunMissed  int    `json:"run_missed,omitempty"`
	BaseMissed int    `json:"base_missed,omitempty"`
	// SpreadPct is the baseline runs' own run-to-run spread (null with
	// fewer than 2 runs); AllowedPct the change in the bad direction let
	// pass: the larger of --max-regression and that spread's 97.5%
	// prediction bound for one more run.
	SpreadPct  *float64 `json:"spread_pct"`
	AllowedPct float64  `json:"allowed_pct"`
	Regressed  bool     `json:"regressed"`
	// HostLimited: the figure would have regressed, but another load on
	// the host limited most of the run's repeats (verdict "host").
	HostLimited bool `json:"host_limited,omitempty"`
	// Verdict is "regressed", "worse within the allowance", "worse within
	// noise", "better", "~" or "no verdict (...)": the figure's own.
	Verdict string `json:"verdict"`
}

// Summary is the verdict in one line: what the run was judged against
// and what came of it.
func (b *Baseline) Summary() string {
	runs := Plural(len(b.Runs), "stored run")
	if len(b.LeftOut) > 0 {
		runs += fmt.Sprintf("; %s that regressed or ran on a busy host left out until accepted, e.g. calibra store accept %s", Plural(len(b.LeftOut), "newer run"), b.LeftOut[0])
	}
	if b.NoCopy > 0 {
		runs += fmt.Sprintf("; %s skipped, recorded before the store kept results.json (calibra store import DIR keeps it)", Plural(b.NoCopy, "run"))
	}
	s := fmt.Sprintf("against the baseline %s (%s): %s", b.Spec, runs, b.Verdict)
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
var BaselineHead = []string{"figure", "run", "baseline", "change", "p (Holm)", "n (run, baseline)", "verdict"}

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
		if f.PHolm != nil {
			p = fmt.Sprintf("%.3f", *f.PHolm)
		}
		run := Num(f.RunMedian) + unit
		if f.RunMissed > 0 {
			run = fmt.Sprintf("%s (%d of %d missed %s)", run, f.RunMissed, f.RunN, f.Bound)
			if f.RunMissed == f.RunN {
				run = "none met " + f.Bound
			}
		}
		title := f.Title
		if f.Step != "" {
			title += " [" + f.Step + "]"
		}
		out = append(out, []string{title, run, Num(f.BaseMedian) + unit, change, p,
			fmt.Sprintf("%d, %d", f.RunN, f.BaseN), f.Verdict})
	}
	return out
}
