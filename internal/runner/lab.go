package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/observe"
)

// labUp builds the stack --lab asks for under --path and points the
// session at its file system: the path, the storage record and, for a
// throttled stack, the block-I/O limits on its loop device.
func (e Env) labUp(ctx context.Context, command string, c *Config, needs *Needs) (*lab.Stack, error) {
	if c.DSN != "" && needs.Database {
		return nil, fault.Input("drop --dsn, or drop --lab", "--lab builds storage for the managed instance, and --dsn names another server")
	}
	parts, err := lab.Parse(c.Lab)
	if err != nil {
		return nil, err
	}
	if err := CheckPath(c.Path, 0, "the lab"); err != nil {
		return nil, err
	}
	if err := checkLabSpace(command, c, *needs, parts); err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stderr, "calibra: building the storage lab %s under %s\n", parts.Spec, c.Path)
	stack, err := lab.Up(ctx, c.Path, parts, e.Group)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.Stderr, "calibra: lab up: %s, mounted at %s\n", parts.Chain(), stack.Mount)
	e.labNotes(stack)
	c.Path = stack.Mount
	// Whatever the command resolved from --path, it now runs on the lab.
	st := observe.Storage(stack.Mount)
	st.Lab = stack.Record()
	needs.Storage = &st
	if parts.ReadIOPS > 0 || parts.WriteIOPS > 0 {
		if needs.Limits == nil {
			needs.Limits = &LimitsNeed{Required: true, Fix: "run as root on a machine with the blkio cgroup controller, or choose another lab preset"}
		}
		needs.Limits.Spec.ReadIOPS, needs.Limits.Spec.WriteIOPS = parts.ReadIOPS, parts.WriteIOPS
	}
	if needs.Limits != nil {
		needs.Limits.Spec.Path = stack.Mount
	}
	return stack, nil
}

// labNotes says what a stack does not keep: the last command's writes, or
// this one's.
func (e Env) labNotes(stack *lab.Stack) {
	if stack.Lost != "" {
		fmt.Fprintf(e.Stderr, "calibra: note: %s: a database it built must be built again\n", stack.Lost)
	}
	if stack.Parts.KeepsNothing() {
		fmt.Fprintf(e.Stderr, "calibra: note: cache=unsafe keeps nothing between commands: what this command writes is gone when it ends\n")
	}
}

// LabParse checks a lab spec ("" is no lab).
func LabParse(spec string) (lab.Parts, error) {
	if spec == "" {
		return lab.Parts{}, nil
	}
	return lab.Parse(spec)
}

// labDown takes the stack apart, saying so when it could not be done
// cleanly ('calibra clean' removes what is left).
func (e Env) labDown(stack *lab.Stack) {
	if err := stack.Down(); err != nil {
		fmt.Fprintf(e.Stderr, "calibra: warning: the lab was not taken down cleanly (%v); 'calibra clean --path %s' removes what is left\n",
			err, strings.TrimSuffix(stack.Root, "/"+lab.DirName))
	}
}

// LabCheck builds the stack spec asks for under path, measures its flush
// rate at queue depth 1 and takes it apart.
func (e Env) LabCheck(ctx context.Context, path, spec string) error {
	if spec == "" {
		return fault.Input("give --lab SPEC, e.g. --lab hdd", "calibra lab check needs --lab")
	}
	parts, err := lab.Parse(spec)
	if err != nil {
		return err
	}
	if err := CheckPath(path, 0, "the lab"); err != nil {
		return err
	}
	stack, err := lab.Up(ctx, path, parts, e.Group)
	if err != nil {
		return err
	}
	defer e.labDown(stack)
	e.labNotes(stack)
	fmt.Fprintf(e.Stdout, "lab %s: %s\nmounted at %s on %s", parts.Spec, parts.Chain(), stack.Mount, stack.Device())
	if stack.Fsck != "" {
		fmt.Fprintf(e.Stdout, " (file system check: %s)", stack.Fsck)
	}
	fmt.Fprintln(e.Stdout)
	fp, err := durability.ProbeFlush(ctx, stack.Mount, stack.Device())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "flush probe: %.0f fsyncs/s at queue depth 1 (%.2f ms each): %s\n", fp.FsyncsPerS, fp.LatencyMsMean, fp.Verdict)
	return nil
}
