package report

import (
	"fmt"

	"github.com/calibra-bench/calibra/internal/report/assets"
	"github.com/calibra-bench/calibra/internal/results"
)

// deviceSteady draws each steady-state point's convergence, as the PTS
// asks: IOPS per round with the measurement window shaded, the window's
// mean with its ±10% band, and its best-fit line; then a table of the
// judgements. A fresh-out-of-box sweep gets a note saying so instead.
func (b *builder) deviceSteady(d *results.Device) {
	m := d.SteadyState
	if m == nil {
		b.sec.Notes = append(b.sec.Notes, "Fresh out of box: a first look, not steady state. Each point is one run on a region written once; a device's sustained rate may be lower (calibra device --steady-state).")
		return
	}
	b.sec.Notes = append(b.sec.Notes, fmt.Sprintf("Steady state (SNIA PTS 2.0): each region preconditioned with %s in %s sequential writes, then rounds of %s s until a window of %d rounds has its range within %s%% of its mean and its best-fit line's excursion within %s%% (at most %d rounds).",
		bytesText(m.PreconditionBytes), bytesText(m.PreconditionBlock), results.Num(m.RoundS), m.WindowRounds, results.Num(m.RangeLimitPct), results.Num(m.SlopeLimitPct), m.MaxRounds))
	var refs []ChartRef
	t := Table{Caption: "Steady state per point (IOPS per round)", Head: []string{"spec", "qd", "reached", "round", "range %", "slope %", "window mean IOPS", "rounds"}, Headline: true}
	for _, p := range d.Points {
		s := p.SteadyState
		if s == nil || len(s.RoundsIOPS) == 0 {
			continue
		}
		refs = append(refs, b.chart(fmt.Sprintf("%s qd %d: %s", p.Spec, p.QD, steadyVerdict(s)), convergence(s)))
		reached := Cell{Text: "yes"}
		if !s.Reached {
			reached = Cell{Text: "no", Class: "bad"}
		}
		row := append(cells(p.Spec, fmt.Sprint(p.QD)), reached)
		row = append(row, cells(fmt.Sprint(s.Round), pctNum(s.RangePct), pctNum(s.SlopePct), results.Num(s.WindowMeanIOPS), fmt.Sprint(len(s.RoundsIOPS)))...)
		t.Rows = append(t.Rows, row)
	}
	if len(refs) > 0 {
		b.charts("Convergence to steady state", refs...)
	}
	b.table(t)
}

// convergence is one point's rounds: IOPS per round, the window shaded,
// its mean, ±10% band and best-fit line.
func convergence(s *results.DeviceSteady) assets.Chart {
	x := make([]float64, len(s.RoundsIOPS))
	for i := range x {
		x[i] = float64(i + 1)
	}
	first := max(s.Round-4, 1)
	fit := []float64{s.FitIntercept + s.FitSlope*float64(first), s.FitIntercept + s.FitSlope*float64(s.Round)}
	mean := s.WindowMeanIOPS
	return assets.Chart{XName: "round", YName: "IOPS", X: assets.Nums(x),
		Series: []assets.Series{{Name: "IOPS per round", Y: assets.Nums(s.RoundsIOPS)},
			{Name: "window best-fit line", Dashed: true, X: assets.Nums([]float64{float64(first), float64(s.Round)}), Y: assets.Nums(fit)}},
		Areas: []assets.Area{{Label: "window", From: float64(first), To: float64(s.Round)}},
		MarkY: []assets.Mark{{Label: "window mean", Value: mean}, {Label: "+10%", Value: mean * 1.1}, {Label: "-10%", Value: mean * 0.9}}}
}

func steadyVerdict(s *results.DeviceSteady) string {
	if s.Reached {
		return fmt.Sprintf("steady at round %d", s.Round)
	}
	return fmt.Sprintf("not steady after %d rounds", len(s.RoundsIOPS))
}

func pctNum(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return results.Num(*v)
}

func bytesText(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return results.Num(v) + " " + units[i]
}
