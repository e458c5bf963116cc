package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/fault"
)

// An error a command returns is a run-time one (exit 1) unless it says it
// is bad input; only cobra's own errors are usage errors.
func TestRunErrorsArePositivelyTyped(t *testing.T) {
	root := &cobra.Command{Use: "calibra", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(&cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error { return errors.New("disk on fire") }},
		&cobra.Command{Use: "bad", RunE: func(*cobra.Command, []string) error { return fault.Input("fix it", "bad input") }})
	markRunErrors(root)
	for _, c := range []struct {
		args []string
		run  bool
		code int
	}{{[]string{"boom"}, true, fault.ExitRuntime}, {[]string{"bad"}, true, fault.ExitInput}, {[]string{"bad", "--nope"}, false, fault.ExitInput}} {
		root.SetArgs(c.args)
		err := root.Execute()
		var re runError
		if errors.As(err, &re) != c.run || (c.run && fault.Code(err) != c.code) {
			t.Errorf("%v: %v (a run error: %v, code %d), want run error %v with code %d", c.args, err, errors.As(err, &re), fault.Code(err), c.run, c.code)
		}
	}
}
