package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/live"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/secret"
)

// defaultStopGrace is how long a child gets to stop cleanly before it is
// killed: a server's fast shutdown writes a checkpoint first.
const defaultStopGrace = time.Minute

// registerCommon registers the flags every running command shares
// (docs/design.md) into c.
func registerCommon(cmd *cobra.Command, c *runner.Config) {
	f := cmd.Flags()
	f.StringVar(&c.Path, "path", ".", "directory on the storage under test; the managed database instance lives under it")
	f.StringVar(&c.Out, "out", "", "run directory (default ./calibra-runs/<UTC time>_<label>)")
	f.StringVar(&c.Label, "label", "", "names the run in its directory name, report and comparisons")
	f.StringVar(&c.Engine, "engine", "", "the database: "+strings.Join(runner.EngineNames(), " or ")+" (default "+runner.DefaultEngine()+", or what --dsn's scheme names); the managed instance lives under PATH")
	f.StringVar(&c.DSN, "dsn", "", "use an existing server instead of the managed instance ("+runner.DSNForms()+"; the password from --dsn-file or the driver's own sources, never the command line, which ps shows)")
	f.StringVar(&c.DSNFile, "dsn-file", "", "read --dsn from this file (keep it 0600), so its password never appears on a command line")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of every random choice, for reproducible data and workloads")
	f.StringVar(&c.Progress, "progress", progress.Auto, "progress on stderr: auto (redrawn on a terminal), plain (a line every 10 s) or none")
	f.BoolVar(&c.JSON, "json", false, "print the final results as JSON on stdout")
	f.StringVar(&c.RunAs, "run-as", "", "unprivileged account that runs the managed server when calibra runs as root (default: the engine's own system account)")
	f.StringVar(&c.DBCache, "db-cache", runner.DefaultDBCache(), "database cache of the managed instance ("+runner.CacheSettings()+"), in that setting's units: e.g. 256MB or 8GB, a bare number in the setting's own unit")
	f.StringVar(&c.WALPath, "wal-path", "", "directory on other storage for the managed instance's WAL or redo log, as the studies put redo on its own disks")
	f.IntVar(&c.Replicas, "replicas", 0, "N standbys of the managed instance ("+runner.StandbyEngines()+"), made from it into PATH (or under --replica-path) and streaming from it over its private socket")
	f.StringVar(&c.Sync, "sync", "", "how commits wait for the --replicas standbys: off (asynchronous), on (until every standby has flushed them; the default) or remote_apply (until every standby has replayed them)")
	f.StringVar(&c.ReplicaPath, "replica-path", "", "directory on other storage for the --replicas standbys' data (default --path)")
	c.Instances = 1
	f.Var(instancesValue{&c.Instances}, "instances", "managed instances of the engine side by side on the storage under test, each its own server and data under PATH/calibra-instances/K, driven together (oltp steps; the users dealt round-robin), as study 001 consolidates databases on one server")
	f.StringArrayVar(&c.SettingFlags, "engine-setting", nil, "a server setting of the managed instance over calibra's defaults, KEY=VALUE, repeatable (e.g. io_method=worker); recorded in meta.engine.settings")
	for _, o := range runner.EngineOptions() {
		f.Var(optionValue{&c.Options, o}, o.Flag, "with --engine "+o.Engine+": "+o.Usage)
	}
	f.StringVar(&c.Lab, "lab", "", "build emulated storage under --path and run on it: hdd, hdd+flash-cache, throttled:read_iops=N ('calibra lab --help')")
}

// registerLive registers --metrics-listen and its protections on a
// command that runs a load.
func registerLive(cmd *cobra.Command, o *live.Options) {
	f := cmd.Flags()
	f.StringVar(&o.Listen, "metrics-listen", "", "serve the run's figures while it runs as OpenMetrics at http://HOST:PORT/metrics, for Prometheus to scrape (a loopback address; port 0: a free one)")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "let --metrics-listen name an address other hosts reach (plain HTTP; needs --metrics-token-file)")
	f.StringVar(&o.TokenFile, "metrics-token-file", "", "the bearer token every scrape of --metrics-listen must carry, read from this file (mode 0600), as Prometheus' authorization.credentials_file sends it")
}

// liveFlags are registerLive's: how the run is watched, not what it measures.
var liveFlags = map[string]bool{"metrics-listen": true, "allow-remote": true, "metrics-token-file": true}

// instancesValue is --instances: a count of servers, so 0 is refused as
// it is read (a study's 0 means one; a command line's 0 asks for none,
// which no command can run).
type instancesValue struct{ n *int }

func (v instancesValue) String() string {
	if v.n == nil {
		return "1"
	}
	return strconv.Itoa(*v.n)
}

func (v instancesValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return errors.New("not a whole number")
	case n < 1 || n > runner.MaxInstances:
		return fault.Input(fmt.Sprintf("give 1 to %d", runner.MaxInstances), "--instances %d is not a number of instances", n)
	}
	*v.n = n
	return nil
}

func (v instancesValue) Type() string { return "int" }

// optionValue is the flag of an engine's own option: its value lands in
// the target's options under the flag's name.
type optionValue struct {
	options *map[string]string
	o       runner.EngineOption
}

func (v optionValue) String() string {
	if s := (*v.options)[v.o.Flag]; s != "" || !v.o.Int {
		return s
	}
	return "0"
}

func (v optionValue) Set(s string) error {
	if v.o.Int {
		if _, err := strconv.Atoi(s); err != nil {
			return errors.New("not a whole number")
		}
	}
	if *v.options == nil {
		*v.options = map[string]string{}
	}
	(*v.options)[v.o.Flag] = s
	return nil
}

func (v optionValue) Type() string {
	if v.o.Int {
		return "int"
	}
	return "string"
}

// env is the process state a run needs.
func (a *app) env() runner.Env {
	e := runner.Env{Stdout: a.stdout, Stderr: a.stderr, StderrTTY: a.stderrTTY, Group: a.group, Version: Version,
		Commit: readBuild().Commit, Record: a.record, Live: a.follow}
	if o := a.baseline; o != nil {
		e.Baseline = func(ctx context.Context, dir string, r *results.Run) (*results.Baseline, error) {
			return a.judge(ctx, *o, dir, r)
		}
	}
	return e
}

// run runs cmd's session: the flags are recorded in meta.study unless
// needs says what to record.
func (a *app) run(cmd *cobra.Command, c *runner.Config, needs runner.Needs, body runner.StepFunc) error {
	command := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	needs.Flags = func() map[string]any { return studyOf(cmd, command) }
	return a.env().Run(cmd.Context(), command, c, needs, body)
}

// studyOf records the command and the value of every flag it takes, defaults
// included, so a run says exactly what was asked (the DSN's password hidden).
func studyOf(cmd *cobra.Command, command string) map[string]any {
	flags := map[string]string{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		// --store says where the run is listed, not what was measured.
		if f.Hidden || f.Name == "help" || f.Name == "store" || f.Name == "store-file" || liveFlags[f.Name] {
			return
		}
		v := f.Value.String()
		if f.Name == "dsn" && v != "" {
			v = secret.RedactDSN(v)
		}
		flags[f.Name] = v
	})
	return map[string]any{"command": command, "flags": flags}
}
