package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/study"
)

// replayFlags are run's shorthand for a study of one replay step.
type replayFlags struct {
	profile, sla string
	scale        float64
}

func (r *replayFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&r.profile, "profile", "", "replay this profile (calibra profile --out FILE) on the storage under test: a study of one replay step")
	fl.StringVar(&r.sla, "sla", runner.ReplayDefaultSLA, "with --profile: the latency bound each multiple of the profile must keep")
	fl.Float64Var(&r.scale, "scale", 1, "with --profile: the replay's data against the profile's database size (the database cache an eighth of it unless --db-cache)")
}

// study is --profile's study, nil without --profile; unless --db-cache is
// given, the managed instance's cache is the one the replay sizes.
func (r *replayFlags) study(ctx context.Context, cmd *cobra.Command, c *runner.Config, f studyFlags) (*study.Study, string, error) {
	fl := cmd.Flags()
	if r.profile == "" {
		if fl.Changed("sla") || fl.Changed("scale") {
			return nil, "", fault.Input("add --profile FILE, or set a replay step's sla and scale in the study", "--sla and --scale go with --profile")
		}
		return nil, "", nil
	}
	if f.preset != "" || f.file != "" {
		return nil, "", fault.Input("drop --preset and --study, or add a replay step to the study file", "--profile makes a study of its own")
	}
	st, cache, err := runner.ReplayStudy(ctx, r.profile, r.sla, r.scale)
	if err == nil && !fl.Changed("db-cache") {
		c.DBCache = cache
	}
	return st, "--profile", err
}
