package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/calibra-bench/calibra/internal/safefs"
)

// Program is a program calibra runs, found once and checked with the rule
// for what calibra runs (safefs.CheckTrusted; docs/security.md, "What
// calibra runs"): no other account can change it, or what leads to it,
// between the check and any start.
type Program struct {
	// Name is the absolute path it was found at, its argv[0]: a
	// multi-call program acts on it (mkfs.ext4 is a link to mke2fs).
	Name string
	// Path is the real file the rule checked: what runs.
	Path string
}

// Find finds name (a path, or a program on PATH) and checks it with the
// rule; what names it in a refusal ("--fio ./fio", "rsync on PATH"). A
// missing program is an error wrapping exec.ErrNotFound, which the caller
// words with its own fix.
func Find(name, what string) (Program, error) {
	found, err := exec.LookPath(name)
	if err != nil {
		return Program{}, fmt.Errorf("%s: %w", name, exec.ErrNotFound)
	}
	abs, err := filepath.Abs(found)
	if err != nil {
		return Program{}, err
	}
	real, err := safefs.CheckTrusted(abs, what)
	if err != nil {
		return Program{}, err
	}
	return Program{Name: abs, Path: real}, nil
}

// Need is Find for a program calibra cannot do without: missing is the
// error when it is not found.
func Need(name, what string, missing error) (Program, error) {
	p, err := Find(name, what)
	if errors.Is(err, exec.ErrNotFound) {
		return p, missing
	}
	return p, err
}

// Command is exec.Command for the program: the checked file runs, under
// the name it was found by.
func (p Program) Command(args ...string) *exec.Cmd { return p.named(exec.Command(p.Path, args...)) }

// CommandContext is exec.CommandContext for the program, as Command.
func (p Program) CommandContext(ctx context.Context, args ...string) *exec.Cmd {
	return p.named(exec.CommandContext(ctx, p.Path, args...))
}

func (p Program) named(cmd *exec.Cmd) *exec.Cmd {
	cmd.Args[0] = p.Name
	return cmd
}
