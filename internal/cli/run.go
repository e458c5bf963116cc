package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/examples"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/study"
)

// studyFlags choose and adjust a study: what `run` and `plan` share.
type studyFlags struct {
	preset, file string
	sets         []string
	thresholds   []string
	osCacheLimit string
	coldStart    bool
	// replay is --profile's study: one replay step of the profile.
	replay replayFlags
}

func (f *studyFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.preset, "preset", "", "a built-in study: "+strings.Join(examples.Names(), ", ")+" (default quick)")
	fl.StringVar(&f.file, "study", "", "a study file (YAML; see examples/ and 'calibra plan')")
	fl.StringArrayVar(&f.sets, "set", nil, "override a setting of every step of a kind: KIND.KEY=VALUE, e.g. oltp.users=16 (repeatable)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "add a threshold: 'KIND.METRIC OP NUMBER', e.g. 'oltp.nopm > 20000' (repeatable)")
	fl.StringVar(&f.osCacheLimit, "os-cache-limit", "", "bound the server's page cache with a memory cgroup, e.g. 1GiB")
	fl.BoolVar(&f.coldStart, "cold-start", false, "restart the server, its files out of the OS page cache, before every step and repeat")
	f.replay.register(fl)
}

// studyEnv are the environment variables a study reads, between the file
// and the flags in precedence.
var studyEnv = map[string]string{
	"path":           "CALIBRA_PATH",
	"engine":         "CALIBRA_ENGINE",
	"dsn":            "CALIBRA_DSN",
	"db-cache":       "CALIBRA_DB_CACHE",
	"os-cache-limit": "CALIBRA_OS_CACHE_LIMIT",
}

const studyLong = `A study is a plan of steps over one target, as the storage papers run them:
the device (fio), I/O through the database (iocal), a TPC-C-like build, timed
runs and a user ramp to an SLA, TPC-H-like decision support; each step
optionally repeated, the cache made cold between them, and the whole judged
against thresholds.

Choose a built-in study with --preset (each is also a file under examples/):
%s
or write your own with --study FILE. A step's keys are the flags of its
layer's command ('calibra oltp run --help' lists those of kind oltp), plus
kind, name, repeat and cold_start:

  version: 1
  target: {path: /mnt/array, db_cache: 1GB, os_cache_limit: 2GiB}
  cold_start: true
  steps:
    - kind: oltp_build
      warehouses: 4
    - kind: oltp
      users: 8
      duration: 5m
      repeat: 3
    - kind: ramp
      from: 4
      to: 64
      step: 4
      sla: 2s
  thresholds:
    - oltp.nopm > 20000
    - ramp.max_users_within_sla >= 32

An existing server is target.dsn (the password redacted wherever calibra
writes it) or, better, target.dsn_file: a 0600 file holding the DSN, so the
password is in no study file (PGPASSWORD and ~/.pgpass work too).

Settings come from, lowest first: each flag's default, the study, the
environment (CALIBRA_PATH, CALIBRA_DSN, CALIBRA_DB_CACHE,
CALIBRA_OS_CACHE_LIMIT), then the command line (--path, --db-cache,
--set KIND.KEY=VALUE, --threshold...). 'calibra plan' prints the result.`

const baselineLong = `

Against a baseline (CI): --baseline last judges the run against the results
store's most recent earlier runs of the same study on the same target (the
same host, engine, storage path or device, command and study name; a lab
tier built with --lab under a path counts as that path's storage, so a
slower tier is a regression), --baseline LABEL against that label's most
recent runs; --baseline-runs says how many (3). Each headline figure (those
compare summarises first) is set against the baseline with compare's
statistics: the medians, the change, and the Mann-Whitney U test over the
run's repeats (a step's repeat: n) and every repeat of every baseline run.
A figure is judged only with 3 or more values a side, and only where the
test can find a difference at p < 0.05 (3 against 3 cannot: its smallest
p is 0.1; 3 against 5, or 4 a side, can); below that there is no verdict
and the run says why. The command exits 3 when a figure moved its bad way
(throughput down, latency up) beyond --max-regression (5%) and
significantly. The verdict goes into results.json ("baseline"), the store
and the report.`

func presetList() string {
	var b strings.Builder
	for _, name := range examples.Names() {
		fmt.Fprintf(&b, "  %-10s %s\n", name, examples.Summary(name))
	}
	return b.String()
}

func (a *app) runCommand() *cobra.Command {
	var c runner.Config
	var f studyFlags
	var bl baselineFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a whole study: every layer, repeated and judged (default: the quick preset)",
		Long:  "Run a study and write its run directory.\n\n" + fmt.Sprintf(studyLong, presetList()) + baselineLong,
		Example: `  # The quick study (about 5 minutes) on the storage under the current directory
  calibra run

  # The HammerDB-style study on an array, three repeats of the timed run
  calibra run --preset tprocc --path /mnt/array --set oltp.repeat=3

  # Your own study, with a threshold that sets the exit code (3 when it fails)
  calibra run --study mystudy.yaml --threshold 'oltp.nopm > 20000'

  # Nightly in CI: three repeats against the last three stored runs (exit 3
  # when a headline figure fell more than 5%, significantly)
  calibra run --study nightly.yaml --path /mnt/array --label nightly \
      --set device.repeat=3 --store sqlite:/var/lib/calibra/ci.db --baseline last`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bl.check(cmd, a.store); err != nil {
				return err
			}
			if bl.spec != "" {
				o := bl.options()
				a.baseline = &o
			}
			flags := c // as given, before a resolution fills it in
			r, err := a.resolveStudy(cmd.Context(), cmd, &c, f, nil)
			if err != nil {
				return err
			}
			if len(r.Study.Variants) > 0 {
				return a.runVariants(cmd, flags, c.Path, f, r.Study.Variants)
			}
			return a.run(cmd, &c, r.Needs(), r.Body())
		},
	}
	registerCommon(cmd, &c)
	registerLive(cmd, &c.Live)
	f.register(cmd)
	bl.register(cmd)
	return cmd
}

func (a *app) planCommand() *cobra.Command {
	var c runner.Config
	var f studyFlags
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print the resolved study (preset or file, environment and flags) without running it",
		Long:  "Resolve a study as 'calibra run' would, check every step, and print it as a\nstudy file on stdout.\n\n" + fmt.Sprintf(studyLong, presetList()),
		Example: `  calibra plan                         # the quick study, resolved
  calibra plan --preset bmf-ramp --set ramp.to=64 > my.yaml
  calibra run --study my.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := a.resolveStudy(cmd.Context(), cmd, &c, f, nil)
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(r.YAML)
			return err
		},
	}
	registerCommon(cmd, &c)
	f.register(cmd)
	return cmd
}

// layers maps a step kind to its layer.
func (a *app) layers() map[string]newLayer {
	return map[string]newLayer{
		results.KindDevice:    func(c *runner.Config) layer { return a.deviceLayer(c).layer },
		results.KindOLTPBuild: a.oltpBuildLayer,
		results.KindOLTP:      a.oltpRunLayer,
		results.KindRamp:      a.oltpRampLayer,
		results.KindScale:     a.oltpScaleLayer,
		results.KindOLTPCheck: a.oltpCheckLayer,
		results.KindIOCal:     a.iocalLayer,
		results.KindDSSBuild:  a.dssBuildLayer,
		results.KindDSS:       a.dssRunLayer("run"),
		results.KindReplay:    a.replayLayer,
	}
}

// resolveStudy reads the study, applies the environment and the flags,
// and plans every step, reporting every problem at once. With a variant,
// it resolves the study as that variant runs: its target settings over
// the study's (flags still win), under PATH/NAME, labelled with its name.
func (a *app) resolveStudy(ctx context.Context, cmd *cobra.Command, c *runner.Config, f studyFlags, variant *study.Variant) (*runner.Study, error) {
	st, name, err := f.replay.study(ctx, cmd, c, f)
	if st == nil && err == nil {
		st, name, err = runner.ReadStudy(ctx, f.preset, f.file)
	}
	if st == nil {
		return nil, err
	}
	var p runner.Problems
	if err != nil {
		p = append(p, unjoin(err)...)
	}
	fromFile := c.DSNFile != ""
	c.ReadDSNFile(&p)
	// A study's dsn_file, unless the command line or the environment names
	// the server.
	if t := st.Target; t.DSNFile != "" && t.DSN != "" {
		p.Add("give one of them", "%s: target has both dsn and dsn_file", name)
	} else if t.DSNFile != "" && !fromFile && !cmd.Flags().Changed("dsn") && os.Getenv(studyEnv["dsn"]) == "" {
		warnExposed(a.stderr, t.DSNFile, name+": target.dsn_file "+t.DSNFile)
		c.DSN, fromFile = runner.ReadServerDSN(t.DSNFile, name+": target.dsn_file "+t.DSNFile, &p), true
	}
	if fromFile && c.DSN != "" {
		_ = cmd.Flags().Set("dsn", c.DSN)
	}
	if variant != nil {
		st.Target = variant.Apply(st.Target)
	}
	applyTarget(cmd, c, &f, st)
	if variant != nil {
		c.Path = filepath.Join(c.Path, variant.Name)
		st.Target.Path, st.Variants = c.Path, nil
		st.Name = strings.TrimSpace(st.Name + " " + variant.Name)
		c.Label = strings.Trim(c.Label+"-"+variant.Name, "-")
	}
	if _, err := runner.LabParse(c.Lab); err != nil {
		p = append(p, err)
	}
	if f.coldStart {
		st.ColdStart = true
	}
	for _, set := range f.sets {
		runner.ApplySet(st, set, &p)
	}
	runner.AddThresholds(st, f.thresholds, &p)
	// The flags every step shares are checked once, not once a step.
	var shared runner.Problems
	c.Validate(&shared)
	p = append(p, shared...)
	said := map[string]bool{}
	for _, e := range shared {
		said[e.Error()] = true
	}
	r := &runner.Study{Study: st}
	r.Limits = runner.StudyLimits(st, c, &p)
	layers := a.layers()
	for i := range st.Steps {
		planStep(ctx, r, layers, c, i, said, &p)
	}
	runner.CheckThresholds(st, &p)
	if err := dedupe(p).Err(); err != nil {
		return nil, err
	}
	if len(c.EngineSettings) > 0 {
		st.Target.EngineSettings = c.EngineSettings
	}
	if r.YAML, err = st.Encode(); err != nil {
		return nil, err
	}
	return r, nil
}

// applyTarget gives the target its settings by precedence: the flag when
// given, else the environment, else the study, else the flag's default;
// and writes the outcome back into the study. The study's dsn_file is
// read apart (resolveStudy), as are its engine settings (under
// --engine-setting's, by Validate).
func applyTarget(cmd *cobra.Command, c *runner.Config, f *studyFlags, st *study.Study) {
	c.OSCacheLimit = f.osCacheLimit
	given := c.Target.Given(func(flag string) bool { return cmd.Flags().Changed(flag) })
	var env study.Target
	for flag, name := range studyEnv {
		if v := os.Getenv(name); v != "" && !cmd.Flags().Changed(flag) {
			env.SetFlag(flag, v)
		}
	}
	file, dsnFile := st.Target, st.Target.DSNFile
	file.DSNFile = ""
	c.Target = c.Target.Over(file).Over(env).Over(given)
	st.Target = c.Target
	st.Target.DSNFile = dsnFile
}

// planStep makes step i's layer, sets its keys as flags and plans it. Its
// settings are then rewritten as every flag's value, so the resolved study
// says exactly what ran.
// Problems in said (the shared flags') are not repeated for the step.
func planStep(ctx context.Context, r *runner.Study, layers map[string]newLayer, c *runner.Config, i int, said map[string]bool, p *runner.Problems) {
	st := r.Study.Steps[i]
	mk, ok := layers[st.Kind]
	if !ok {
		*p = append(*p, study.Problem(st.Pos, "use one of: "+strings.Join(kindNames(layers), ", "), "%q is not a step kind", st.Kind))
		return
	}
	l := mk(c)
	fl := l.cmd.Flags()
	unset := false // a setting that failed leaves its flag's zero, not worth a second complaint
	for _, prm := range st.Params {
		flag := strings.ReplaceAll(prm.Key, "_", "-")
		if f := fl.Lookup(flag); f == nil || !settable(f) {
			*p = append(*p, study.Problem(prm.Pos, "use one of: "+strings.Join(flagNames(fl), ", "), "%q is not a setting of kind %s", prm.Key, st.Kind))
			continue
		}
		if err := fl.Set(flag, prm.Value); err != nil {
			*p = append(*p, study.Problem(prm.Pos, "see 'calibra help' for the setting's form", "%s: %v", prm.Key, err))
			unset = true
		}
	}
	if unset {
		return
	}
	// A cold OLTP load starts from the loaded database, not the last run's.
	cold := r.Study.ColdStart
	if st.ColdStart != nil {
		cold = *st.ColdStart
	}
	if f := fl.Lookup("reset"); cold && f != nil && !f.Changed && c.DSN == "" {
		_ = fl.Set("reset", "true")
	}
	// A study measures its own build: it replaces what an earlier run left.
	if f := fl.Lookup("rebuild"); f != nil && !f.Changed {
		_ = fl.Set("rebuild", "true")
	}
	needs, body, err := l.planned(ctx)
	if err != nil {
		for _, e := range unjoin(err) {
			if !said[e.Error()] {
				*p = append(*p, fault.Input("", "%s step %d (%s): %v", st.Pos, i+1, st.Kind, e))
			}
		}
		return
	}
	st.Params = nil
	fl.VisitAll(func(f *pflag.Flag) {
		if settable(f) && (f.Changed || !unsetDefault(f.DefValue)) {
			st.Params = append(st.Params, study.Param{Key: strings.ReplaceAll(f.Name, "-", "_"), Value: f.Value.String()})
		}
	})
	r.Study.Steps[i] = st
	r.Steps = append(r.Steps, runner.PlannedStep{Step: st, Index: i + 1, Needs: needs, Body: body})
}

func kindNames(layers map[string]newLayer) []string {
	names := make([]string, 0, len(layers))
	for k := range layers {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// settable reports whether a flag is a step setting: the study's own
// repeat key is the whole step's, not a flag's.
func settable(f *pflag.Flag) bool { return !f.Hidden && f.Name != "repeat" }

// unsetDefault reports whether a default means "not set" (0 warehouses:
// as built), so the resolved study leaves it out rather than set it.
func unsetDefault(v string) bool { return v == "" || v == "0" || v == "[]" }

func flagNames(fl *pflag.FlagSet) []string {
	var names []string
	fl.VisitAll(func(f *pflag.Flag) {
		if settable(f) {
			names = append(names, strings.ReplaceAll(f.Name, "-", "_"))
		}
	})
	return names
}

// unjoin splits a joined error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// dedupe drops repeated problems: every step checks the common flags.
func dedupe(p runner.Problems) runner.Problems {
	var out runner.Problems
	seen := map[string]bool{}
	for _, e := range p {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			out = append(out, e)
		}
	}
	return out
}
