package cli

import (
	"context"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/runner"
)

// A layer is one kind of step: a command of its own, and a step of a study
// with the same flags as keys (its kind in results.json and in study files
// is its key in app.layers). plan validates the flags (with the common
// ones) and returns what the step needs and the work it does, so a command
// and a study check and run a step the same way.
type layer struct {
	cmd  *cobra.Command
	plan func(ctx context.Context) (runner.Needs, runner.StepFunc, error)
}

// planned checks what every flag shares, then plans the layer: a command
// and a study step both come this way.
func (l layer) planned(ctx context.Context) (runner.Needs, runner.StepFunc, error) {
	if err := finiteFloats(l.cmd.Flags()); err != nil {
		return runner.Needs{}, nil, err
	}
	return l.plan(ctx)
}

// finiteFloats refuses NaN and infinities, which a float flag parses
// happily and no comparison of a layer's checks catches.
func finiteFloats(fl *pflag.FlagSet) error {
	var p runner.Problems
	fl.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() != "float64" {
			return
		}
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			p.Add("give a finite number, such as 1 or 0.5", "--%s %s is not a number", f.Name, f.Value.String())
		}
	})
	return p.Err()
}

// newLayer makes a layer whose plan reads the given common flags.
type newLayer func(c *runner.Config) layer

// command makes a layer a command: the common flags, then one session.
func (a *app) command(make newLayer) *cobra.Command {
	c := &runner.Config{}
	l := make(c)
	registerCommon(l.cmd, c)
	registerLive(l.cmd, &c.Live)
	l.cmd.Args = noArgs
	l.cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		needs, body, err := l.planned(cmd.Context())
		if err != nil {
			return err
		}
		return a.run(cmd, c, needs, body)
	}
	return l.cmd
}
