package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/pathlock"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/secret"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// defaultStopGrace is how long a child gets to stop cleanly before it is
// killed: a PostgreSQL fast shutdown writes a checkpoint first.
const defaultStopGrace = time.Minute

// common are the flags every running command shares (DESIGN.md).
type common struct {
	path, out, label, dsn, progress string
	dsnFile                         string
	seed                            uint64
	json                            bool
	pgBin, runAs, dbCache           string
	lab                             string // an emulated storage stack to build under path (cli/lab.go)
	walPath                         string
	// engineSettings are --engine-setting KEY=VALUE as given; settings the
	// parsed map, with a study's engine_settings under them.
	engineSettings []string
	settings       map[string]string
}

func (c *common) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.path, "path", ".", "directory on the storage under test; the managed PostgreSQL instance lives in PATH/calibra-pg")
	f.StringVar(&c.out, "out", "", "run directory (default ./calibra-runs/<UTC time>_<label>)")
	f.StringVar(&c.label, "label", "", "names the run in its directory name, report and comparisons")
	f.StringVar(&c.dsn, "dsn", "", "use an existing PostgreSQL server instead of the managed instance (postgres://user@host:port/db; the password from PGPASSWORD, ~/.pgpass or --dsn-file, never the command line, which ps shows)")
	f.StringVar(&c.dsnFile, "dsn-file", "", "read --dsn from this file (keep it 0600), so its password never appears on a command line")
	f.Uint64Var(&c.seed, "seed", 1, "seed of every random choice, for reproducible data and workloads")
	f.StringVar(&c.progress, "progress", progress.Auto, "progress on stderr: auto (redrawn on a terminal), plain (a line every 10 s) or none")
	f.BoolVar(&c.json, "json", false, "print the final results as JSON on stdout")
	f.StringVar(&c.pgBin, "pg-bin", "", "directory of the PostgreSQL server binaries (default: pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)")
	f.StringVar(&c.runAs, "run-as", "", "unprivileged account that runs the managed server when calibra runs as root (default postgres)")
	f.StringVar(&c.dbCache, "db-cache", postgres.DefaultDBCache, "database cache of the managed instance (shared_buffers), e.g. 256MB or 8GB")
	f.StringVar(&c.walPath, "wal-path", "", "directory on other storage for the managed instance's WAL (initdb --waldir), as the studies put redo on its own disks")
	f.StringArrayVar(&c.engineSettings, "engine-setting", nil, "a server setting of the managed instance over calibra's defaults, KEY=VALUE, repeatable (e.g. io_method=worker on PostgreSQL 18); recorded in meta.engine.settings")
	f.StringVar(&c.lab, "lab", "", "build emulated storage under --path and run on it: hdd, hdd+flash-cache, throttled:read_iops=N ('calibra lab --help')")
}

// problems collects every input problem so they are reported at once.
type problems []error

func (p *problems) add(fix, format string, args ...any) {
	*p = append(*p, fault.Input(fix, format, args...))
}

func (p problems) err() error { return errors.Join(p...) }

func (c *common) validate(p *problems) {
	c.readDSNFile(p)
	c.parseEngineSettings(p)
	switch c.progress {
	case progress.Auto, progress.Plain, progress.None:
	default:
		p.add("use auto, plain or none", "--progress %q is not a progress mode", c.progress)
	}
	if c.dsn == "" && c.dbCache != "" {
		// PostgreSQL's floor is 16 buffers; more than the machine holds
		// would fail late, at the server's start.
		bytes, ok := memoryBytes(c.dbCache)
		switch mem := observe.Host().MemBytes; {
		case !ok:
			p.add("give a size such as 256MB or 8GB", "--db-cache %q is not a memory size", c.dbCache)
		case bytes < 128<<10:
			p.add("give 128kB or more, such as 256MB", "--db-cache %s is below PostgreSQL's minimum of 128kB", c.dbCache)
		case mem > 0 && bytes >= mem:
			p.add("give less than the machine's memory", "--db-cache %s is more than this machine's %s of memory", c.dbCache, humanBytes(mem))
		}
	}
}

// parseEngineSettings reads --engine-setting KEY=VALUE over the study's
// settings, refusing the ones calibra owns (its access and its files) and
// any setting for a server calibra does not manage.
func (c *common) parseEngineSettings(p *problems) {
	if c.settings == nil {
		c.settings = map[string]string{}
	}
	for _, kv := range c.engineSettings {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			p.add("write it as KEY=VALUE, e.g. --engine-setting io_method=worker", "--engine-setting %q is not KEY=VALUE", kv)
			continue
		}
		c.settings[k] = strings.TrimSpace(v)
	}
	for k := range c.settings {
		if slices.Contains(postgres.ManagedSettings, k) {
			p.add("leave it to calibra, which keeps the managed instance reachable only through its private socket", "the engine setting %s is calibra's own", k)
		}
	}
	if c.dsn != "" && len(c.settings) > 0 {
		p.add("set it on that server yourself, or drop --dsn to use the managed instance", "engine settings apply to the managed instance only, not to a --dsn server")
	}
	if c.dsn != "" && c.walPath != "" {
		p.add("drop --wal-path, or drop --dsn to use the managed instance", "--wal-path places the managed instance's WAL, not a --dsn server's")
	}
	if c.walPath != "" {
		if st, err := os.Stat(c.walPath); err != nil || !st.IsDir() {
			p.add("create it, or name an existing directory on the WAL's storage", "--wal-path %s is not a directory", c.walPath)
		}
	}
}

// readDSNFile takes --dsn from --dsn-file, so that its password is on no
// command line.
func (c *common) readDSNFile(p *problems) {
	if c.dsnFile == "" {
		return
	}
	if c.dsn != "" {
		p.add("give one of them", "--dsn and --dsn-file are both given")
		return
	}
	c.dsn = readDSN(c.dsnFile, "--dsn-file "+c.dsnFile, p)
	c.dsnFile = "" // read once: a study's steps share these flags
}

// readDSN reads a DSN from the file at path (what names it in problems).
func readDSN(path, what string, p *problems) string {
	data, err := os.ReadFile(path)
	dsn := strings.TrimSpace(string(data))
	switch {
	case err != nil:
		p.add("name a readable file holding the DSN", "%s cannot be read (%v)", what, errors.Unwrap(err))
	case dsn == "":
		// Not the managed instance in the current directory by surprise.
		p.add("write the DSN in it, e.g. postgres://user@host:5432/db", "%s is empty", what)
	}
	return dsn
}

// memoryBytes reads a PostgreSQL memory size (a number of 8 kB buffers, or
// with kB, MB, GB or TB), reporting whether it is one.
func memoryBytes(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if i == 0 || err != nil {
		return 0, false
	}
	unit := map[string]uint64{"": 8 << 10, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[strings.ToUpper(s[i:])]
	if unit == 0 || n > math.MaxUint64/unit {
		return 0, false
	}
	return n * unit, true
}

func validMemory(s string) bool {
	_, ok := memoryBytes(s)
	return ok
}

// checkPath verifies the storage path before anything is written: it must
// exist, be a writable directory, and have room for what will be put there.
func checkPath(path string, needBytes uint64, what string) error {
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

// session is a running command: its run directory, target (nil for
// commands without a database) and progress.
type session struct {
	dir    *results.Dir
	target *postgres.Target
	prog   *progress.Printer
	path   string           // storage under test
	obs    *observe.Sampler // nil when the observers could not start
	extra  []observe.Extra  // the steps' own per-second columns for timeseries.csv
	ticks  []oltp.Tick      // the oltp load's seconds, over every oltp step
	// rawPrefix names a study step's files under raw/ (empty for a command).
	rawPrefix string
	// limits are the cache and storage limits in force (nil: none asked);
	// cacheBytes bounds what the caches can hold, 0 when unbounded.
	limits     *results.AppliedLimits
	cacheBytes int64
	cgroup     *limits.Cgroup // holds the server and fio; nil without limits
}

// stepFunc does a command's work and returns its steps (also when it fails
// part-way, so that what was measured is kept).
type stepFunc func(ctx context.Context, s *session) ([]results.Step, error)

// sessionNeeds says what a command needs before it starts.
type sessionNeeds struct {
	database bool   // a database target: the managed instance or --dsn
	maxConns int    // connections the command opens at once
	bytes    uint64 // free space needed under --path
	// storage describes targets the command has checked itself (files,
	// block devices, several paths); nil means --path, checked here.
	storage *results.Storage
	// study, when set, is what meta.study records instead of the
	// command's flags (a study's resolved plan).
	study map[string]any
	// limits, when set, bound the managed server's caches and I/O.
	limits *limitsNeed
}

// limitsNeed is the cgroup a session's managed server is to run in.
type limitsNeed struct {
	spec             limits.Spec
	dbCache, osCache string // as given, for the record
	// required makes a limit that cannot be applied an input error;
	// otherwise the run goes on and says so.
	required bool
	fix      string // how to do without, when required
}

// apply creates the cgroup, or records why it cannot be (nil cgroup).
func (l *limitsNeed) apply(dsn string) (*limits.Cgroup, *results.AppliedLimits, error) {
	rec := &results.AppliedLimits{DBCache: l.dbCache, OSCacheLimit: l.osCache, NotApplied: map[string]string{}}
	if dsn != "" {
		rec.DBCache, rec.OSCacheLimit = "", ""
		rec.NotApplied["limits"] = "the server is not calibra's (--dsn)"
		return nil, rec, nil
	}
	cg, err := limits.New(l.spec)
	if err != nil {
		if l.required {
			return nil, nil, fault.Input(l.fix, "the cache or storage limits cannot be applied: %v", err)
		}
		rec.NotApplied["limits"] = err.Error()
		return nil, rec, nil
	}
	applied := cg.Applied()
	applied.DBCache, applied.OSCacheLimit = l.dbCache, l.osCache
	return cg, &applied, nil
}

// runSession opens the target (when the command needs a database) and the
// run directory, runs body, records its steps and the final status, and
// stops the managed server on every path.
func (a *app) runSession(cmd *cobra.Command, c *common, needs sessionNeeds, body stepFunc) error {
	ctx := cmd.Context()
	command := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	// A label is printed by compare and report: no terminal escapes.
	c.label = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, c.label)
	if c.lab != "" {
		stack, err := a.labUp(ctx, c, &needs)
		if err != nil {
			return err
		}
		defer a.labDown(stack)
	}
	if needs.storage == nil && (c.dsn == "" || !needs.database) {
		if err := checkPath(c.path, needs.bytes, command); err != nil {
			return err
		}
	}
	var cg *limits.Cgroup
	var applied *results.AppliedLimits
	if needs.limits != nil {
		dsn := c.dsn
		if !needs.database {
			dsn = ""
		}
		var err error
		if cg, applied, err = needs.limits.apply(dsn); err != nil {
			return err
		}
		if cg != nil {
			defer cg.Close()
		}
	}
	var target *postgres.Target
	if needs.database {
		var err error
		target, err = postgres.Prepare(ctx, postgres.TargetConfig{DSN: c.dsn, Path: c.path, PGBin: c.pgBin,
			RunAs: c.runAs, DBCache: c.dbCache, MaxConnections: needs.maxConns, Cgroup: cg,
			Settings: c.settings, WALPath: c.walPath})
		if err != nil {
			return err
		}
	}
	if needs.storage == nil && (c.dsn == "" || !needs.database) {
		lock, err := pathlock.Acquire(c.path, command)
		var held *pathlock.HeldError
		if errors.As(err, &held) {
			return fault.Input("wait for it to finish, or stop it; a lock of a killed calibra frees itself", "%v", err)
		}
		if err != nil {
			return fmt.Errorf("lock %s: %w", c.path, err)
		}
		defer lock.Release()
	}
	started := time.Now().UTC()
	out := c.out
	if out == "" {
		out = results.DefaultPath(started, c.label)
	}
	var storage results.Storage
	switch {
	case needs.storage != nil:
		storage = *needs.storage
	case c.dsn == "" || !needs.database:
		storage = observe.Storage(c.path)
	}
	if c.walPath != "" && c.dsn == "" && needs.database {
		wal := observe.Storage(c.walPath)
		storage.WAL = &wal
	}
	run := &results.Run{StartedAt: started, Meta: results.Meta{ToolVersion: Version, Command: command,
		Label: c.label, Seed: c.seed, Host: observe.Host(), Storage: storage, Study: needs.study, Limits: applied}}
	if run.Meta.Study == nil {
		run.Meta.Study = studyOf(cmd, command)
	}
	if target != nil {
		run.Meta.Engine = &target.Info
	}
	dir, err := results.Create(out, run)
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(dir.File("logs", "calibra.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	prog := progress.New(a.stderr, c.progress, a.stderrTTY)
	prog.LogTo(logFile)
	prog.Phase("calibra %s: %s, run directory %s", Version, command, dir.Path)

	s := &session{dir: dir, target: target, prog: prog, path: c.path, limits: applied, cgroup: cg}
	if cg != nil {
		s.cacheBytes = needs.limits.spec.MemoryBytes
	}
	if needs.storage != nil {
		s.path = needs.storage.Path
	}
	if target != nil {
		err = a.runTarget(ctx, s, body)
	} else {
		err = s.observed(ctx, body)
	}
	// Bad input that only the server could reveal (a schema already built,
	// none to check): its one sentence says it all, and no run is left.
	if fault.Code(err) == fault.ExitInput && ctx.Err() == nil {
		measured := false
		_ = dir.Update(func(r *results.Run) {
			for _, st := range r.Steps {
				measured = measured || st.Status == results.StatusComplete
			}
		})
		if !measured {
			_ = os.RemoveAll(dir.Path)
			return err
		}
	}
	status := stepStatus(ctx, err)
	if err != nil {
		fmt.Fprintf(logFile, "%s error: %v\n", time.Now().UTC().Format(time.RFC3339Nano), err)
	}
	if ferr := dir.Finish(status, err); ferr != nil && err == nil {
		err = ferr
	}
	if rerr := report.Write(dir.Path); rerr != nil {
		prog.Phase("warning: report.html and report.md not written: %v (calibra report %s makes them again)", rerr, dir.Path)
	}
	a.summary(dir, prog, status)
	if c.json {
		if r, lerr := results.Load(dir.Path); lerr == nil {
			enc := json.NewEncoder(a.stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(r)
		}
	}
	if status == results.StatusInterrupted {
		return wrap(fault.ErrInterrupted)
	}
	return wrap(err)
}

func (a *app) runTarget(ctx context.Context, s *session, body stepFunc) error {
	s.target.SetServerLog(s.dir.File("logs", "server.log"))
	defer func() {
		if err := s.target.Stop(); err != nil {
			s.prog.Phase("warning: %v", err)
		}
	}()
	if s.target.Managed != nil {
		s.prog.Phase("starting the managed PostgreSQL %s in %s", s.target.Info.Version, s.target.Managed.DataDir)
	}
	initialised, err := s.target.Start(ctx, a.group)
	if initialised {
		s.prog.Phase("initialised a new data directory %s", s.target.Managed.DataDir)
	}
	for _, r := range s.target.Repairs {
		s.prog.Phase("%s", r)
	}
	if err != nil {
		return err
	}
	if err := s.dir.Update(func(r *results.Run) { r.Meta.Engine = &s.target.Info }); err != nil {
		return err
	}
	return s.observed(ctx, body)
}

// observed runs body with the OS and database observers sampling, keeps
// the steps it returns, and writes timeseries.csv. Observation is
// evidence, not the measurement: if the observers cannot start, the steps
// run anyway and say why.
func (s *session) observed(ctx context.Context, body stepFunc) error {
	cfg := observe.Config{Path: s.path}
	if s.target != nil && s.target.Managed != nil {
		cfg.WALPath = s.target.Managed.WALDir()
	}
	if s.target != nil {
		cfg.Engine = s.target
	}
	obs, err := observe.Start(ctx, cfg)
	if err != nil {
		s.prog.Phase("warning: observers not started: %v", err)
	} else {
		s.obs = obs
		if err := s.warnOnce(engineLimitWarnings(obs.EngineLimits())...); err != nil {
			return err
		}
	}
	steps, err := body(ctx, s)
	err = errors.Join(err, s.keep(ctx, steps, err))
	if s.obs == nil {
		if len(s.ticks) > 0 {
			var buf bytes.Buffer
			if werr := oltp.WriteTimeseries(&buf, s.ticks); werr == nil {
				err = errors.Join(err, writeFile(s.dir, buf.Bytes(), "timeseries.csv"))
			}
		}
		return err
	}
	if serr := s.obs.Stop(); serr != nil {
		s.prog.Phase("warning: observers: %v", serr)
	}
	extra := s.extra
	if len(s.ticks) > 0 {
		extra = append(extra, oltp.TickColumns(s.ticks))
	}
	var buf bytes.Buffer
	if werr := observe.WriteCSV(&buf, s.obs.Samples(), extra...); werr == nil {
		if werr := writeFile(s.dir, buf.Bytes(), "timeseries.csv"); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// engineLimitWarnings turns what the server cannot give into one sentence
// each, metrics that share a reason together, in a stable order.
func engineLimitWarnings(limits map[string]string) []string {
	byReason := map[string][]string{}
	var out []string
	for metric, why := range limits {
		if metric == observe.ObserversInside {
			out = append(out, why)
			continue
		}
		byReason[why] = append(byReason[why], metric)
	}
	for why, metrics := range byReason {
		sort.Strings(metrics)
		out = append(out, fmt.Sprintf("%s: %s not measured", why, strings.Join(metrics, ", ")))
	}
	sort.Strings(out)
	return out
}

// warnOnce adds run-level warnings to results.json, each at most once.
func (s *session) warnOnce(warnings ...string) error {
	if len(warnings) == 0 {
		return nil
	}
	return s.dir.Update(func(r *results.Run) {
		for _, w := range warnings {
			if !slices.Contains(r.Warnings, w) {
				r.Warnings = append(r.Warnings, w)
			}
		}
	})
}

// keep gives each step its status (from err when it has none) and the
// observations of its timed window (the whole step when it has none), and
// appends it to results.json.
func (s *session) keep(ctx context.Context, steps []results.Step, err error) error {
	var kerr error
	for _, st := range steps {
		if st.Status == "" {
			st.Status = stepStatus(ctx, err)
		}
		if s.obs != nil {
			from, to := st.StartedAt, time.Now()
			if st.FinishedAt != nil {
				to = *st.FinishedAt
			}
			if o, ok := st.Body.(*results.OLTP); ok && o.WindowStart != nil && o.WindowEnd != nil {
				from, to = *o.WindowStart, *o.WindowEnd
			}
			st.Observe = s.obs.Window(from, to)
		}
		var driver *float64
		if o, ok := st.Body.(*results.OLTP); ok && o.Driver != nil {
			driver = &o.Driver.MachineSharePct
		}
		st.LimitedBy, st.LimitedByEvidence = verdict.Decide(st.Observe, driver)
		if h, ok := st.Body.(results.HeadlineLimiter); ok {
			if by, ev, ok := h.HeadlineLimit(); ok {
				st.LimitedBy, st.LimitedByEvidence = by, ev
			}
		}
		if o := st.Observe; o != nil && o.CPUOutsidePct != nil && *o.CPUOutsidePct >= verdict.HostNoticePct {
			kerr = errors.Join(kerr, s.warnOnce(fmt.Sprintf("another load on the host: processes outside calibra and the database used %.0f%% of the machine during %s %q; its figures may be lower and noisier than the storage allows",
				*o.CPUOutsidePct, st.Kind, st.Name)))
		}
		kerr = errors.Join(kerr, s.dir.AddStep(st))
	}
	return kerr
}

// restartCold restarts the managed server with the OS page cache dropped,
// reporting whether it could be; the database observer holds its polls
// meanwhile (they are not failures) and reconnects at the next edge.
func (a *app) restartCold(ctx context.Context, s *session) (dropped bool, err error) {
	restart := func() error {
		dropped, err = s.target.Restart(ctx, a.group)
		return err
	}
	if s.obs == nil {
		err = restart()
		return dropped, err
	}
	if err = s.obs.Restart(restart); err != nil {
		return dropped, err
	}
	s.obs.Edge()
	return dropped, ctx.Err()
}

// edge reads the observers at a window edge; nil when there are none.
func (s *session) edge() func() time.Time {
	if s.obs == nil {
		return nil
	}
	return s.obs.Edge
}

func stepStatus(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil:
		return results.StatusInterrupted
	case err != nil:
		return results.StatusFailed
	default:
		return results.StatusComplete
	}
}

// newStep starts a step record.
func newStep(kind, name string, started time.Time, body any) results.Step {
	now := time.Now().UTC()
	return results.Step{StepHeader: results.StepHeader{Kind: kind, Name: name, StartedAt: started.UTC(), FinishedAt: &now}, Body: body}
}

// writeFile writes a run-directory file atomically.
func writeFile(dir *results.Dir, data []byte, parts ...string) error {
	path := dir.File(parts...)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(path, data)
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
