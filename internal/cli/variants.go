package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/calibra-bench/calibra/internal/compare"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/study"
)

// runVariants runs a study once per variant, each in its own run
// directory and on PATH/NAME of the same storage, after checking every
// variant; then sets the runs side by side as compare does. A failed
// variant does not stop the others; an interrupted one does.
func (a *app) runVariants(cmd *cobra.Command, flags runner.Config, base string, f studyFlags, variants []study.Variant) error {
	ctx := cmd.Context()
	type planned struct {
		name string
		c    *runner.Config
		r    *runner.Study
	}
	var plans []planned
	var made []string
	var errs []error
	for _, v := range variants {
		dir := filepath.Join(base, v.Name)
		_, statErr := os.Lstat(dir)
		// The variant's --path is calibra's own, made fresh or taken only
		// as such: everything of the variant is written beneath it by name.
		if _, err := safefs.MkdirOwn(base, v.Name, 0o755); err != nil {
			var in *fault.InputError
			if !errors.As(err, &in) {
				err = fault.Input("choose a --path you can write to", "cannot make the variant's directory %s: %v", dir, errors.Unwrap(err))
			}
			errs = append(errs, err)
			continue
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			made = append(made, dir)
		}
		c := new(runner.Config)
		*c = flags
		r, err := a.resolveStudy(ctx, cmd, c, f, &v)
		if err == nil {
			err = runner.CheckServer(c)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("variant %s: %w", v.Name, err))
			continue
		}
		plans = append(plans, planned{v.Name, c, r})
	}
	if len(errs) > 0 {
		for _, d := range made {
			_ = os.Remove(d) // safefs: an empty directory MkdirOwn made above, in a --path that passed the rule
		}
		return errors.Join(errs...)
	}
	var dirs []string
	var first error
	for i, p := range plans {
		if p.c.Out == "" {
			out, err := results.DefaultPath(time.Now(), p.c.Label)
			if err != nil {
				if first == nil {
					first = err
				}
				break
			}
			p.c.Out = out
		} else {
			p.c.Out = filepath.Join(p.c.Out, p.name)
		}
		fmt.Fprintf(a.stderr, "variant %d of %d: %s, on %s\n", i+1, len(plans), p.name, p.c.Path)
		err := a.run(cmd, p.c, p.r.Needs(), p.r.Body())
		if _, statErr := os.Stat(filepath.Join(p.c.Out, "results.json")); statErr == nil {
			dirs = append(dirs, p.c.Out)
		}
		if err != nil && first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if cerr := a.compareVariants(dirs); cerr != nil && first == nil {
		first = cerr
	}
	return first
}

// compareVariants prints the variants' runs side by side, the first as the
// base, and says how to get the HTML page.
func (a *app) compareVariants(dirs []string) error {
	if len(dirs) < 2 {
		return nil
	}
	runs, err := compare.Load(dirs)
	if err != nil {
		return wrap(err)
	}
	t, err := compare.Compare(runs)
	var nc *compare.NoCommonStepError
	if errors.As(err, &nc) {
		return nil // nothing in common to set side by side
	}
	if err != nil {
		return wrap(err)
	}
	fmt.Fprintf(a.stdout, "\nthe variants side by side (calibra compare %s --html compare.html draws them):\n", strings.Join(dirs, " "))
	return wrap(t.Write(a.stdout, "text"))
}
