package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// A layer is one kind of step: a command of its own, and a step of a study
// with the same flags as keys. plan validates the flags (with the common
// ones) and returns what the step needs and the work it does, so a command
// and a study check and run a step the same way.
type layer struct {
	kind string // the step kind in results.json and in study files
	cmd  *cobra.Command
	plan func(ctx context.Context) (sessionNeeds, stepFunc, error)
}

// newLayer makes a layer whose plan reads the given common flags.
type newLayer func(c *common) layer

// command makes a layer a command: the common flags, then one session.
func (a *app) command(make newLayer) *cobra.Command {
	c := &common{}
	l := make(c)
	c.register(l.cmd)
	l.cmd.Args = cobra.NoArgs
	l.cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		needs, body, err := l.plan(cmd.Context())
		if err != nil {
			return err
		}
		return a.runSession(cmd, c, needs, body)
	}
	return l.cmd
}
