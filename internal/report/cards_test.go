package report

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// engineRuns are the run directories of each engine's golden report
// (internal/runner's TestSummaryAndReportGolden).
const engineRuns = "../runner/testdata/engines"

// TestCardsCarryTheirPointsVerdicts walks every headline card of every
// golden report, the report's own runs and each engine's, and holds it to
// the point its figure comes from, found in results.json by the figure
// alone: the card says that point's verdict (a figure of the step's whole
// window, the step's). A quick study's sequential write card once said
// the step's verdict, taken from the random reads' point.
func TestCardsCarryTheirPointsVerdicts(t *testing.T) {
	dirs := []string{}
	for _, name := range fixtures(t) {
		dirs = append(dirs, filepath.Join(runs, name))
	}
	engines, err := os.ReadDir(engineRuns)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engines {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(engineRuns, e.Name()))
		}
	}
	cards, apart := 0, 0
	for _, dir := range dirs {
		run, err := results.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range run.Steps {
			one := *run
			one.Steps = []results.Step{st}
			for _, c := range Build(&one, nil).Cards {
				cards++
				if c.LimitedBy != st.LimitedBy {
					apart++
				}
				checkCard(t, dir, st, c)
			}
		}
	}
	// The test holds cards whose point is not the step's headline point.
	if cards == 0 || apart == 0 {
		t.Errorf("%d cards, %d of them with a verdict other than their step's: the runs no longer test what the cards show", cards, apart)
	}
}

// checkCard finds the points whose figure the card shows and checks that
// each says the card's verdict.
func checkCard(t *testing.T, dir string, st results.Step, c Card) {
	t.Helper()
	if c.Value == "n/a" {
		if c.LimitedBy != "" {
			t.Errorf("%s: card %q shows no figure, yet a verdict %q", dir, c.Name, c.LimitedBy)
		}
		return
	}
	var found []string
	for _, p := range pointsOf(st, c) {
		if p.value == c.Value {
			found = append(found, p.limitedBy)
		}
	}
	if len(found) == 0 {
		t.Errorf("%s: card %q shows %s, the figure of no point of step %s", dir, c.Name, c.Value, st.Name)
	}
	for _, by := range found {
		if by != c.LimitedBy {
			t.Errorf("%s: card %q (%s) says limited by %q, its point %q", dir, c.Name, c.Value, c.LimitedBy, by)
		}
	}
}

// figure is a point's figure as a card prints it, and its verdict.
type figure struct{ value, limitedBy string }

var firstNumber = regexp.MustCompile(`\d+`)

// pointsOf are the figures of the points a card of the step may show:
// every point of the sweep or ramp it heads, or the step's own window.
func pointsOf(st results.Step, c Card) []figure {
	var out []figure
	switch body := st.Body.(type) {
	case *results.Device:
		for _, p := range body.Points {
			if spec, unit, _ := strings.Cut(c.Name, " "); p.Spec == spec {
				out = append(out, figure{results.Num(map[string]float64{"IOPS": p.IOPS, "MB/s": p.MBps}[unit]), p.LimitedBy})
			}
		}
	case *results.IOCal:
		var points []results.IOCalPoint
		mbps := true
		switch {
		case c.Name == "iocal max IOPS" && body.RandomRead != nil:
			points, mbps = body.RandomRead.Points, false
		case strings.HasSuffix(c.Name, "sequential read") && body.SeqRead != nil:
			points = body.SeqRead.Points
		case strings.HasSuffix(c.Name, "sequential write") && body.SeqWrite != nil:
			points = body.SeqWrite.Points
		}
		for _, p := range points {
			out = append(out, figure{results.Num(map[bool]float64{true: p.MBPS, false: p.IOPS}[mbps]), p.LimitedBy})
		}
	case *results.Ramp:
		for _, s := range body.Steps {
			switch {
			case c.Name == "max TPS":
				out = append(out, figure{results.Num(s.TPS), s.LimitedBy})
			case c.Name == "users within SLA" && firstNumber.FindString(c.Value) == fmt.Sprint(s.Users):
				out = append(out, figure{c.Value, s.LimitedBy})
			case c.Name == fmt.Sprintf("ART at %d users", s.Users):
				out = append(out, figure{results.Num(s.ARTMs), s.LimitedBy})
			}
		}
	case *results.Scale:
		for _, p := range body.Points {
			out = append(out, figure{results.NumPtr(p.NOPM), p.LimitedBy})
		}
	default:
		out = append(out, figure{c.Value, st.LimitedBy})
	}
	return out
}
