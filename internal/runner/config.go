// Package runner runs calibra's steps: it opens a session (the target,
// the cache and storage limits, the observers, the run directory), runs
// each layer's step in it, judges a study's thresholds and prints the
// end-of-run summary. The command line (internal/cli) maps its flags to
// the configurations here and errors to exit codes; nothing else.
package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/live"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/study"
)

// DefaultDBCache is the managed instance's database cache when none is
// asked: the default engine's.
func DefaultDBCache() string {
	d, _ := engine.Lookup(engine.Default())
	return d.Cache.Default
}

// Config is what every running command shares (docs/design.md): the
// target, filled by the command line's common flags or a study's target,
// and how the run is recorded and shown.
type Config struct {
	study.Target
	Out, Label, Progress string
	Seed                 uint64
	JSON                 bool
	// SettingFlags are --engine-setting KEY=VALUE as given; Validate reads
	// them into EngineSettings, over a study's engine_settings.
	SettingFlags []string
	// DataChecksums: engine.Config's, for the power-loss audit's own
	// instance.
	DataChecksums bool
	// Live is --metrics-listen and its protections: the run's figures
	// exported while it runs.
	Live live.Options
}

// MaxInstances bounds --instances: each is a whole server with its cache.
const MaxInstances = 16

// InstancePath is where instance k (from 1) of --instances keeps its data
// (and, under --wal-path, its WAL): a directory of its own, so each
// engine's managed instance lies in it as in PATH.
func InstancePath(path string, k int) string {
	return filepath.Join(path, InstancesDir, strconv.Itoa(k))
}

// InstancesDir holds the instances of --instances under PATH.
const InstancesDir = "calibra-instances"

// Problems collects every input problem so they are reported at once.
type Problems []error

// Add adds an input problem: how to fix it, and what it is.
func (p *Problems) Add(fix, format string, args ...any) {
	*p = append(*p, fault.Input(fix, format, args...))
}

// Err is every problem joined, nil when there are none.
func (p Problems) Err() error { return errors.Join(p...) }

// Validate checks the shared settings, adding what is wrong to p.
func (c *Config) Validate(p *Problems) {
	c.ReadDSNFile(p)
	c.resolveEngine(p)
	c.parseEngineSettings(p)
	c.checkReplicas(p)
	// The label names the run directory: one it cannot name would leave
	// the run nowhere to go.
	if err := results.CheckLabel("--label", c.Label); err != nil {
		*p = append(*p, err)
	}
	switch c.Progress {
	case progress.Auto, progress.Plain, progress.None:
	default:
		p.Add("use auto, plain or none", "--progress %q is not a progress mode", c.Progress)
	}
	switch {
	case c.Instances < 0 || c.Instances > MaxInstances:
		p.Add(fmt.Sprintf("give 1 to %d", MaxInstances), "--instances %d is not a number of instances", c.Instances)
	case c.Instances > 1 && c.DSN != "":
		p.Add("drop --instances, or drop --dsn to let calibra start the instances", "--instances starts managed instances, and --dsn names a server calibra does not manage")
	}
	if _, known := engine.Lookup(c.Engine); known && c.DSN == "" && c.DBCache != "" {
		// Read in the engine's own units, down to its own floor; more
		// than the machine holds would fail late, at the server's start.
		bytes, err := engine.ParseCache(c.Engine, c.DBCache)
		switch mem := observe.Host().MemBytes; {
		case err != nil:
			*p = append(*p, err)
		case mem > 0 && bytes >= mem:
			p.Add("give less than the machine's memory", "--db-cache %s is more than this machine's %s of memory", c.DBCache, humanBytes(mem))
		}
	}
}

// dbCacheBytes is the managed instance's cache in bytes; 0 for a DSN or
// a size the engine does not read (refused by Validate).
func (c *Config) dbCacheBytes() int64 {
	if c.DSN != "" {
		return 0
	}
	bytes, err := engine.ParseCache(c.Engine, c.DBCache)
	if err != nil {
		return 0
	}
	return int64(bytes)
}

// serverMemory is the engine's own memory beyond its cache and backends,
// which a memory limit must leave room for.
func serverMemory(name string) int64 {
	d, _ := engine.Lookup(name)
	return d.ServerMemory
}

// engineConfig is the target as the engine opens it: the one place the
// runner's configuration reaches the engine's.
func (c *Config) engineConfig() engine.Config {
	return engine.Config{DSN: c.DSN, Path: c.Path, RunAs: c.RunAs, DBCache: c.DBCache, Settings: c.EngineSettings,
		WALPath: c.WALPath, Replicas: c.Replicas, Sync: c.Sync, ReplicaPath: c.ReplicaPath, Options: c.Options,
		DataChecksums: c.DataChecksums}
}

// parseEngineSettings reads --engine-setting KEY=VALUE over the study's
// settings, refusing the ones calibra owns (its access and its files) and
// any setting for a server calibra does not manage.
func (c *Config) parseEngineSettings(p *Problems) {
	// A copy: a study's variants share the map they started from.
	c.EngineSettings = maps.Clone(c.EngineSettings)
	if c.EngineSettings == nil {
		c.EngineSettings = map[string]string{}
	}
	for _, kv := range c.SettingFlags {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			p.Add("write it as KEY=VALUE, e.g. --engine-setting io_method=worker", "--engine-setting %q is not KEY=VALUE", kv)
			continue
		}
		c.EngineSettings[k] = strings.TrimSpace(v)
	}
	if d, ok := engine.Lookup(c.Engine); ok && d.CheckSettings != nil {
		if err := d.CheckSettings(c.EngineSettings); err != nil {
			*p = append(*p, err)
		}
	}
	if c.DSN != "" && len(c.EngineSettings) > 0 {
		p.Add("set it on that server yourself, or drop --dsn to use the managed instance", "engine settings apply to the managed instance only, not to a --dsn server")
	}
	if c.DSN != "" && c.WALPath != "" {
		p.Add("drop --wal-path, or drop --dsn to use the managed instance", "--wal-path places the managed instance's WAL, not a --dsn server's")
	}
	if c.WALPath != "" {
		if st, err := os.Stat(c.WALPath); err != nil || !st.IsDir() {
			p.Add("create it, or name an existing directory on the WAL's storage", "--wal-path %s is not a directory", c.WALPath)
		} else if err := safefs.CheckDir(c.WALPath, ""); err != nil {
			*p = append(*p, err) // the WAL is written there by name, as under --path
		}
	}
}

// checkReplicas refuses standbys where calibra cannot make them, and
// --sync or --replica-path without standbys.
func (c *Config) checkReplicas(p *Problems) {
	switch {
	case c.Replicas < 0:
		p.Add("give a whole number of standbys, such as 1, or 0 for none", "--replicas %d is negative", c.Replicas)
	case c.Replicas > maxReplicas:
		p.Add(fmt.Sprintf("give at most %d", maxReplicas), "--replicas %d is more standbys than calibra runs on one machine", c.Replicas)
	}
	d, _ := engine.Lookup(c.Engine)
	if c.Sync != "" && d.Standbys != nil && !slices.Contains(d.Standbys.SyncModes, c.Sync) {
		p.Add("use "+oneOf(d.Standbys.SyncModes), "--sync %q is not a synchronous replication mode", c.Sync)
	}
	if c.Replicas <= 0 {
		if c.Sync != "" {
			p.Add("add --replicas N, or drop --sync", "--sync says how commits wait for standbys, and --replicas asks for none")
		}
		if c.ReplicaPath != "" {
			p.Add("add --replicas N, or drop --replica-path", "--replica-path places standbys, and --replicas asks for none")
		}
		return
	}
	switch {
	case c.DSN != "":
		p.Add("drop --replicas, or drop --dsn to use the managed instance", "--replicas makes standbys of the managed instance, not of a --dsn server")
	case d.Standbys == nil:
		var what []string
		for _, o := range engine.Descriptors() {
			if o.Standbys != nil {
				what = append(what, o.Standbys.What)
			}
		}
		p.Add("drop --replicas"+otherEngines(func(o engine.Descriptor) bool { return o.Standbys != nil }),
			"--replicas is %s, and the engine is %s", strings.Join(what, " or "), engine.Title(c.Engine))
	}
	if c.Instances > 1 {
		// Each instance would need its own standbys, and --replica-path
		// one directory each: not built yet.
		p.Add("drop --replicas or --instances", "--replicas makes standbys of one managed instance, and --instances asks for %d", c.Instances)
	}
	if c.ReplicaPath != "" {
		if st, err := os.Stat(c.ReplicaPath); err != nil || !st.IsDir() {
			p.Add("create it, or name an existing directory on the standbys' storage", "--replica-path %s is not a directory", c.ReplicaPath)
		} else if err := safefs.CheckDir(c.ReplicaPath, ""); err != nil {
			*p = append(*p, err) // the standbys are made there by name, as under --path
		}
	}
	if d.Standbys == nil {
		return
	}
	for _, k := range d.Standbys.Settings {
		if _, ok := c.EngineSettings[k]; ok {
			p.Add("drop that engine setting: --sync sets it", "the engine setting %s is calibra's with --replicas", k)
		}
	}
}

// otherEngines is ", or use --engine NAME" for the engines that have what
// has, as a fix offers them; "" when none has.
func otherEngines(has func(engine.Descriptor) bool) string {
	var names []string
	for _, d := range engine.Descriptors() {
		if has(d) {
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return ", or use --engine " + strings.Join(names, " or ")
}

// maxReplicas bounds --replicas: each standby is a whole server on this
// machine.
const maxReplicas = 8

// resolveEngine settles which engine runs: --engine, else the one the
// DSN's scheme names, else the default; and checks the engines' own
// options.
func (c *Config) resolveEngine(p *Problems) {
	fromDSN := engine.ForScheme(c.DSN)
	switch {
	case c.Engine == "" && fromDSN != "":
		c.Engine = fromDSN
	case c.Engine == "":
		c.Engine = engine.Default()
	case !slices.Contains(engine.Names(), c.Engine):
		p.Add("use one of: "+strings.Join(engine.Names(), ", "), "--engine %q is not an engine calibra knows", c.Engine)
		return
	case fromDSN != "" && fromDSN != c.Engine:
		p.Add("drop --engine, or give a DSN of that engine", "--dsn names a %s server, and --engine %s", fromDSN, c.Engine)
	}
	for _, o := range engine.Options() {
		if v := c.Options[o.Flag]; o.Engine != c.Engine && v != "" && !(o.Int && v == "0") {
			p.Add(fmt.Sprintf("drop --%s, or add --engine %s", o.Flag, o.Engine), "--%s %s, and the engine is %s", o.Flag, o.Role, engine.Title(c.Engine))
		}
	}
	if d, _ := engine.Lookup(c.Engine); d.CheckOptions != nil {
		if err := d.CheckOptions(c.engineConfig(), c.Instances); err != nil {
			*p = append(*p, err)
		}
	}
}

// ReadDSNFile takes --dsn from --dsn-file, so that its password is on no
// command line.
func (c *Config) ReadDSNFile(p *Problems) {
	if c.DSNFile == "" {
		return
	}
	if c.DSN != "" {
		p.Add("give one of them", "--dsn and --dsn-file are both given")
		return
	}
	c.DSN = ReadServerDSN(c.DSNFile, "--dsn-file "+c.DSNFile, p)
	c.DSNFile = "" // read once: a study's steps share these flags
}

// ReadServerDSN reads a server's DSN from the file at path (what names it
// in problems), as ReadDSN does, and refuses what is not a DSN's shape:
// the engines' own refusals quote the DSN, and that would print a file
// that holds something else (a token, a key).
func ReadServerDSN(path, what string, p *Problems) string {
	n := len(*p)
	dsn := ReadDSN(path, what, p)
	if len(*p) == n && !secret.IsDSN(dsn) {
		p.Add("write the DSN in it, e.g. "+ExampleDSN(), "%s holds no DSN (a URL or key=value pairs)", what)
		return ""
	}
	return dsn
}

// ReadDSN reads a DSN, or a results store's URL, from the file at path
// (what names it in problems): one line of at most safefs.MaxSecretBytes,
// read by the one reader of inputs. A problem never quotes the file: it
// may be any file root can read (/etc/shadow, a key).
func ReadDSN(path, what string, p *Problems) string {
	if safefs.IsStdin(path) {
		p.Add("write it in a file (mode 0600) and name that file", "%s: calibra reads a DSN from a file, not from standard input", what)
		return ""
	}
	// A file, never standard input: nothing to cancel.
	data, err := safefs.ReadInput(context.Background(), path, safefs.MaxSecretBytes,
		fault.Input("give the file holding the DSN alone, on one line", "%s is larger than the %d KiB a DSN file holds", what, safefs.MaxSecretBytes>>10))
	dsn := strings.TrimSpace(string(data))
	var in *fault.InputError
	switch {
	case errors.As(err, &in):
		*p = append(*p, fault.Input(in.Fix, "%s: %s", what, in.Msg))
	case err != nil:
		p.Add("name a readable file holding the DSN", "%s cannot be read (%v)", what, errors.Unwrap(err))
	case dsn == "":
		// Not the managed instance in the current directory by surprise.
		p.Add("write the DSN in it, e.g. "+ExampleDSN(), "%s is empty", what)
	case strings.ContainsFunc(dsn, unicode.IsControl):
		p.Add("write the DSN alone, on one line", "%s holds more than one line, or control characters", what)
		dsn = ""
	}
	return dsn
}

// CheckPath verifies the storage path before anything is written: it must
// exist, be a writable directory, and have room for what will be put there.
func CheckPath(path string, needBytes uint64, what string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fault.Input("create it or choose another --path", "the path %s does not exist", path)
	}
	if err != nil {
		return fault.Input("choose another --path", "the path %s cannot be read: %v", path, errors.Unwrap(err))
	}
	if !st.IsDir() {
		return fault.Input("give a directory on the storage under test", "the path %s is not a directory", path)
	}
	if err := unix.Access(path, unix.W_OK); err != nil {
		return fault.Input("choose a --path you can write to", "the path %s is not writable (%v)", path, err)
	}
	// Everything calibra makes under --path is written, and handed to
	// fio and the servers, by name: no other account may be able to swap
	// a part of it.
	if err := safefs.CheckDir(path, ""); err != nil {
		return err
	}
	return checkFree(path, needBytes, what)
}

// checkFree refuses a path with less than needBytes free for what.
func checkFree(path string, needBytes uint64, what string) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err == nil {
		free := fs.Bavail * uint64(fs.Bsize)
		if free < needBytes {
			return fault.Input("free some space or choose another --path",
				"the path %s has %s free but %s needs about %s", path, humanBytes(free), what, humanBytes(needBytes))
		}
	}
	return nil
}

// spaceFor is the free space a command needs: minFree plus count units of
// per bytes. A count that makes no size (NaN, infinite, or a product past
// what a file system holds) is an input error naming flag, so that an
// absurd --warehouses is refused before anything starts.
func spaceFor(flag string, count float64, per uint64) (uint64, error) {
	const most = 1 << 62 // 4 EiB: more than any file system here
	if math.IsNaN(count) || math.IsInf(count, 0) || count < 0 || count > float64(most-minFree)/float64(per) {
		return 0, fault.Input("give a value whose data fits on one storage path", "%s %s makes no possible size", flag, strconv.FormatFloat(count, 'f', -1, 64))
	}
	return minFree + uint64(count*float64(per)), nil
}

func humanBytes(b uint64) string {
	const unit = 1 << 10
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}

// CheckServer finds now what preparing the managed server would find only
// when the run starts: its binaries, and whether they know every engine
// setting asked (nothing to check for a --dsn server).
func CheckServer(c *Config) error {
	d, ok := engine.Lookup(c.Engine)
	if c.DSN != "" || !ok || d.CheckServer == nil {
		return nil
	}
	return d.CheckServer(c.engineConfig())
}
