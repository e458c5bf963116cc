package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/examples"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/study"
)

// ReadStudy reads the study file ("-" for standard input), or else the
// built-in preset (quick when neither is given), and parses it; name is
// what its problems call it. A study with problems comes with them; none
// comes with what stopped it. A study file tells root what to run: it
// must pass safefs.CheckTrusted, as OpenSSH asks of authorized_keys.
func ReadStudy(ctx context.Context, preset, file string) (st *study.Study, name string, err error) {
	if preset != "" && file != "" {
		return nil, "", fault.Input("give one of them", "--preset and --study both choose the study")
	}
	var data []byte
	switch {
	case safefs.IsStdin(file):
		name = "the study on standard input"
		if data, err = safefs.ReadInput(ctx, file, safefs.MaxStudyBytes, studyTooLarge(name)); err != nil {
			return nil, "", err
		}
	case file != "":
		name = file
		var real string
		if real, err = safefs.CheckTrusted(file, "the study file "+file); err != nil {
			return nil, "", err
		}
		if data, err = safefs.ReadInput(ctx, real, safefs.MaxStudyBytes, studyTooLarge(file)); err != nil {
			return nil, "", unreadable(file, err)
		}
	default:
		if preset == "" {
			preset = "quick"
		}
		var ok bool
		if data, ok = examples.Study(preset); !ok {
			return nil, "", fault.Input("use one of: "+strings.Join(examples.Names(), ", "), "--preset %q is not a built-in study", preset)
		}
		name = "preset " + preset
	}
	st, err = study.Parse(data, name)
	return st, name, err
}

func studyTooLarge(name string) error {
	return fault.Input("give the study itself: one is a few KiB", "%s is larger than the %d MiB calibra reads as a study", name, safefs.MaxStudyBytes>>20)
}

// unreadable is a read error of the input file (what names it), kept when
// it is already one sentence with its fix.
func unreadable(what string, err error) error {
	var in *fault.InputError
	if errors.As(err, &in) {
		return err
	}
	return fault.Input("give the path of a readable file", "%s cannot be read: %v", what, errors.Unwrap(err))
}

// AddThresholds adds --threshold expressions to the study's.
func AddThresholds(st *study.Study, exprs []string, p *Problems) {
	for _, expr := range exprs {
		t, err := study.ParseThreshold(expr)
		if err != nil {
			p.Add("write it as 'KIND.METRIC OP NUMBER', e.g. 'oltp.nopm > 20000'", "--threshold: %v", err)
			continue
		}
		t.Pos = study.Pos{File: "--threshold"}
		st.Thresholds = append(st.Thresholds, t)
	}
}

// CheckThresholds checks that each threshold names a kind of the study's
// steps and a metric of that kind.
func CheckThresholds(st *study.Study, p *Problems) {
	for _, t := range st.Thresholds {
		if !slices.ContainsFunc(st.Steps, func(s study.Step) bool { return s.Kind == t.Kind }) {
			*p = append(*p, study.Problem(t.Pos, "name the kind of one of the study's steps", "threshold %q names %s, which the study has no step of", t.Expr, t.Kind))
		} else if !results.KnownMetric(t.Kind, t.Metric) {
			*p = append(*p, study.Problem(t.Pos, "use one of: "+strings.Join(results.MetricNames[t.Kind], ", "), "threshold %q names no metric of %s", t.Expr, t.Kind))
		}
	}
}

// ApplySet applies --set KIND.KEY=VALUE to every step of that kind.
func ApplySet(st *study.Study, set string, p *Problems) {
	name, value, ok := strings.Cut(set, "=")
	kind, key, ok2 := strings.Cut(name, ".")
	if !ok || !ok2 || kind == "" || key == "" {
		p.Add("write it as KIND.KEY=VALUE, e.g. oltp.users=16", "--set %q is not KIND.KEY=VALUE", set)
		return
	}
	pos := study.Pos{File: "--set " + set}
	found := false
	for i := range st.Steps {
		if st.Steps[i].Kind != kind {
			continue
		}
		found = true
		switch key {
		case "repeat":
			var n int
			if _, err := fmt.Sscan(value, &n); err != nil || n <= 0 {
				p.Add("give a whole number of 1 or more", "--set %s: repeat %q is not positive", set, value)
			} else if n > study.MaxRepeat {
				p.Add(fmt.Sprintf("repeat must be at most %d", study.MaxRepeat), "--set %s: repeat %d is too many", set, n)
			}
			st.Steps[i].Repeat = n
		case "name":
			st.Steps[i].Name = value
		default:
			st.Steps[i].Set(key, value, pos)
		}
	}
	if !found {
		p.Add("name the kind of one of the study's steps ('calibra plan' lists them)", "--set %q: the study has no step of kind %s", set, kind)
	}
}
