package proc

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Tool is an external program calibra drives (fio, tpchgen-cli): found on
// PATH or where a flag points, with a version of at least MinMajor.
type Tool struct {
	Name     string         // the program on PATH, e.g. "fio"
	Flag     string         // the flag naming another, e.g. "--fio"
	What     string         // how messages call it, e.g. "the TPC-H generator tpchgen-cli"
	Version  *regexp.Regexp // matches --version's output; group 1 is the major version
	MinMajor int
	Hint     string // how to install it: the fix of every error
	// Resolve, when set, maps the found path to the program to run; what
	// it maps to, and any program it runs to find it, pass the rule too.
	Resolve func(ctx context.Context, path string) (string, error)
}

// Find locates the tool (explicit, else on PATH), checks it with the rule
// for what calibra runs before it runs it, and checks its version; it
// returns the checked real path. Every failure is an input error naming
// the fix.
func (t Tool) Find(ctx context.Context, explicit string) (path, version string, err error) {
	name, what := t.Name, t.Name+" on PATH"
	missing := fault.Input(t.Hint, "%s was not found on PATH", t.What)
	if explicit != "" {
		name, what = explicit, t.Flag+" "+explicit
		missing = fault.Input(t.Hint, "%s %s is not an executable program", t.Flag, explicit)
	}
	prog, err := Need(name, what, missing)
	if err != nil {
		return "", "", err
	}
	path = prog.Path
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if t.Resolve != nil {
		if path, err = t.Resolve(ctx, path); err != nil {
			return "", "", err
		}
		if path, err = safefs.CheckTrusted(path, what); err != nil {
			return "", "", err
		}
	}
	out, err := VersionOutput(exec.CommandContext(ctx, path, "--version"))
	if err != nil {
		return "", "", fault.Input(t.Hint, "'%s --version' failed: %v", path, err)
	}
	version = strings.TrimSpace(string(out))
	m := t.Version.FindStringSubmatch(version)
	if m == nil {
		return "", "", fault.Input(t.Hint, "'%s --version' printed %q, not a %s version", path, version, t.Name)
	}
	if major, _ := strconv.Atoi(m[1]); major < t.MinMajor {
		return "", "", fault.Input(t.Hint, "%s is %s, older than the %s %d.0 calibra needs", path, version, t.Name, t.MinMajor)
	}
	return path, version, nil
}
