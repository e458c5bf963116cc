package cli

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/runner"
	"github.com/calibra-bench/calibra/internal/secret"
)

// defaultStopGrace is how long a child gets to stop cleanly before it is
// killed: a PostgreSQL fast shutdown writes a checkpoint first.
const defaultStopGrace = time.Minute

// registerCommon registers the flags every running command shares
// (docs/design.md) into c.
func registerCommon(cmd *cobra.Command, c *runner.Config) {
	f := cmd.Flags()
	f.StringVar(&c.Path, "path", ".", "directory on the storage under test; the managed database instance lives under it")
	f.StringVar(&c.Out, "out", "", "run directory (default ./calibra-runs/<UTC time>_<label>)")
	f.StringVar(&c.Label, "label", "", "names the run in its directory name, report and comparisons")
	f.StringVar(&c.Engine, "engine", "", "the database: postgresql or mariadb (default postgresql, or what --dsn's scheme names); the managed instance lives in PATH/calibra-pg or PATH/calibra-mariadb")
	f.StringVar(&c.DSN, "dsn", "", "use an existing server instead of the managed instance (postgres://user@host:port/db or mysql://user@host:port/db; the password from PGPASSWORD, ~/.pgpass or --dsn-file, never the command line, which ps shows)")
	f.StringVar(&c.DSNFile, "dsn-file", "", "read --dsn from this file (keep it 0600), so its password never appears on a command line")
	f.Uint64Var(&c.Seed, "seed", 1, "seed of every random choice, for reproducible data and workloads")
	f.StringVar(&c.Progress, "progress", progress.Auto, "progress on stderr: auto (redrawn on a terminal), plain (a line every 10 s) or none")
	f.BoolVar(&c.JSON, "json", false, "print the final results as JSON on stdout")
	f.StringVar(&c.PGBin, "pg-bin", "", "directory of the PostgreSQL server binaries (default: pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)")
	f.StringVar(&c.RunAs, "run-as", "", "unprivileged account that runs the managed server when calibra runs as root (default postgres)")
	f.StringVar(&c.DBCache, "db-cache", runner.DefaultDBCache, "database cache of the managed instance (PostgreSQL shared_buffers, MariaDB innodb_buffer_pool_size), e.g. 256MB or 8GB")
	f.StringVar(&c.WALPath, "wal-path", "", "directory on other storage for the managed instance's WAL or redo log (initdb --waldir, innodb_log_group_home_dir), as the studies put redo on its own disks")
	f.IntVar(&c.Replicas, "replicas", 0, "N standbys of the managed PostgreSQL instance, made by pg_basebackup into PATH/calibra-pg-replica-K (or under --replica-path) and streaming from it over its private socket")
	f.StringVar(&c.Sync, "sync", "", "how commits wait for the --replicas standbys: off (asynchronous), on (until every standby has flushed them; the default) or remote_apply (until every standby has replayed them)")
	f.StringVar(&c.ReplicaPath, "replica-path", "", "directory on other storage for the --replicas standbys' data (default --path)")
	f.IntVar(&c.Galera, "galera", 0, "with --engine mariadb: a Galera cluster of N managed nodes on this machine (PATH/calibra-mariadb-galera-K), users spread over them; needs galera-4")
	f.IntVar(&c.Instances, "instances", 1, "managed instances of the engine side by side on the storage under test, each its own server and data under PATH/calibra-instances/K, driven together (oltp steps; the users dealt round-robin), as study 001 consolidates databases on one server")
	f.StringArrayVar(&c.EngineSettings, "engine-setting", nil, "a server setting of the managed instance over calibra's defaults, KEY=VALUE, repeatable (e.g. io_method=worker on PostgreSQL 18); recorded in meta.engine.settings")
	f.StringVar(&c.Lab, "lab", "", "build emulated storage under --path and run on it: hdd, hdd+flash-cache, throttled:read_iops=N ('calibra lab --help')")
}

// env is the process state a run needs.
func (a *app) env() runner.Env {
	return runner.Env{Stdout: a.stdout, Stderr: a.stderr, StderrTTY: a.stderrTTY, Group: a.group, Version: Version}
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
		if f.Hidden || f.Name == "help" {
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
