package cli

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/proc"
)

// Parse parses args as calibra's command line, running nothing: the path
// of the command they name ("calibra oltp run") and its flags, or the
// error for which calibra would exit 2 (an unknown command or flag, a
// flag's bad value, a wrong count of arguments). An example that shows a
// command line (the Kubernetes Job) is checked with it.
func Parse(args []string) (string, *pflag.FlagSet, error) {
	a := &app{stdout: io.Discard, stderr: io.Discard, group: proc.NewGroup()}
	root := a.rootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return "", nil, err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return "", nil, err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return "", nil, err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return "", nil, err
	}
	return cmd.CommandPath(), cmd.Flags(), nil
}
