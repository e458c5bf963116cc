package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/calibra-bench/calibra/internal/engine"
	_ "github.com/calibra-bench/calibra/internal/engines" // every engine and its workload dialects
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/live"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/pathlock"
	"github.com/calibra-bench/calibra/internal/proc"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/terms"
	"github.com/calibra-bench/calibra/internal/verdict"
)

// Env is the process a run belongs to: its streams, the children it owns
// and calibra's version.
type Env struct {
	Stdout, Stderr io.Writer
	StderrTTY      bool
	Group          *proc.Group
	Version        string
	Commit         string // the commit calibra was built from, "" when unknown
	// Record, when set, records a finished run directory in the results
	// store (internal/store) and returns the line the command ends with:
	// where it recorded the run, or a warning that it could not. It never
	// changes how the command ends: the run directory is the truth.
	Record func(ctx context.Context, dir string) string
	// Baseline, when set, judges a finished run against the results
	// store's earlier runs of the same target (run --baseline): the
	// verdict goes into results.json before the run is recorded, and a
	// regression is exit 3.
	Baseline func(ctx context.Context, dir string, r *results.Run) (*results.Baseline, error)
	// Live, when set, records the run directory in the results store as
	// the run starts (status running) and keeps its progress there until
	// it ends: calibra serve's live page.
	Live func(ctx context.Context, dir string) (Live, error)
}

// Session is a running command: its run directory, target (nil for
// commands without a database) and progress.
type Session struct {
	env    Env
	dir    *results.Dir
	target engine.Engine // nil for commands without a database
	prog   *progress.Printer
	path   string // storage under test
	// command is what runs, such as "oltp run".
	command string
	obs     *observe.Sampler // nil when the observers could not start
	extra   []observe.Extra  // the steps' own per-second columns for timeseries.csv
	metrics *live.Board      // --metrics-listen's figures; nil without it
	ticks   []oltp.Tick      // the oltp load's seconds, over every oltp step
	// rawPrefix names a study step's files under raw/ (empty for a command).
	rawPrefix string
	// limits are the cache and storage limits in force (nil: none asked);
	// cacheBytes bounds what the caches can hold, 0 when unbounded.
	limits     *results.AppliedLimits
	cacheBytes int64
	cgroup     *limits.Cgroup // holds the server and fio; nil without limits
	live       Live           // the run's live record; nil without one
}

// StepFunc does a command's work and returns its steps (also when it fails
// part-way, so that what was measured is kept).
type StepFunc func(ctx context.Context, s *Session) ([]results.Step, error)

// Needs says what a command needs before it starts.
type Needs struct {
	Database bool   // a database target: the managed instance or --dsn
	MaxConns int    // connections the command opens at once
	Bytes    uint64 // free space needed under --path
	// Build, when set, is the build the command makes first when the
	// managed instance holds no schema (oltp run's, dss run's): its space
	// is checked with Bytes before anything is made when no managed data
	// lies under --path yet, and again before the build otherwise.
	Build *BuildNeed
	// Storage describes targets the command has checked itself (files,
	// block devices, several paths); nil means --path, checked here.
	Storage *results.Storage
	// Study, when set, is what meta.study records instead of the
	// command's flags (a study's resolved plan).
	Study map[string]any
	// Flags is what meta.study records without a Study: the command and
	// its flags, read as the run starts (the lab has moved --path by then).
	Flags func() map[string]any
	// Limits, when set, bound the managed server's caches and I/O.
	Limits *LimitsNeed
	// Rights, when set, checks a --dsn server's account before the run
	// directory exists (engine.CheckRights).
	Rights func(ctx context.Context, e engine.Engine) error
}

// BuildNeed is the build a command makes when it finds no schema: the
// free space it needs, as the build command's own check counts it, and
// what it is ("a build of 10 warehouses").
type BuildNeed struct {
	Bytes uint64
	What  string
}

// managedDataUnder says whether the managed instance's data directories
// (its first instance's with --instances) may already lie under --path:
// then the schema may be built, and the build's space is checked only if
// the command finds none (checkBuildSpace).
func managedDataUnder(c *Config) bool {
	base := c.Path
	if c.Instances > 1 {
		base = InstancePath(c.Path, 1)
	}
	d, _ := engine.Lookup(c.Engine)
	for _, m := range d.Managed {
		found, err := filepath.Glob(filepath.Join(base, m.Pattern))
		if err != nil || len(found) > 0 {
			return true
		}
	}
	return false
}

// checkBuildSpace refuses, before it starts, a build a command makes
// because it found no schema, when the storage lacks the space the build
// command would have asked for.
func (s *Session) checkBuildSpace(b *BuildNeed) error {
	if b == nil {
		return nil
	}
	return checkFree(s.path, b.Bytes, b.sentence(s.command))
}

// sentence is command with the build it makes first, as a sentence on
// free space names it.
func (b *BuildNeed) sentence(command string) string {
	return command + ", which makes " + b.What + " first,"
}

// LimitsNeed is the cgroup a session's managed server is to run in.
type LimitsNeed struct {
	Spec             limits.Spec
	DBCache, OSCache string // as given, for the record
	// Required makes a limit that cannot be applied an input error;
	// otherwise the run goes on and says so.
	Required bool
	Fix      string // how to do without, when required
}

// applyLimits applies the limits the command needs, if any, to the
// managed server (a server at dsn is not calibra's to limit).
func (n Needs) applyLimits(dsn string) (*limits.Cgroup, *results.AppliedLimits, error) {
	if n.Limits == nil {
		return nil, nil, nil
	}
	if !n.Database {
		dsn = ""
	}
	return n.Limits.apply(dsn)
}

// apply creates the cgroup, or records why it cannot be (nil cgroup).
func (l *LimitsNeed) apply(dsn string) (*limits.Cgroup, *results.AppliedLimits, error) {
	rec := &results.AppliedLimits{DBCache: l.DBCache, OSCacheLimit: l.OSCache, NotApplied: map[string]string{}}
	if dsn != "" {
		rec.DBCache, rec.OSCacheLimit = "", ""
		rec.NotApplied["limits"] = "the server is not calibra's (--dsn)"
		return nil, rec, nil
	}
	cg, err := limits.New(l.Spec)
	if err != nil {
		if l.Required {
			return nil, nil, fault.Input(l.Fix, "the cache or storage limits cannot be applied: %v", err)
		}
		rec.NotApplied["limits"] = err.Error()
		return nil, rec, nil
	}
	applied := cg.Applied()
	applied.DBCache, applied.OSCacheLimit = l.DBCache, l.OSCache
	return cg, &applied, nil
}

// Run runs command (such as "oltp run"): it opens the target (when the
// command needs a database) and the run directory, runs body, records its
// steps and the final status, and stops the managed server on every path.
func (e Env) Run(ctx context.Context, command string, c *Config, needs Needs, body StepFunc) error {
	c.Label = printable(c.Label)
	ep, board, err := startMetrics(ctx, c.Live, command)
	if err != nil {
		return err
	}
	if ep != nil {
		defer ep.Close(true)
	}
	if c.Lab != "" {
		stack, err := e.labUp(ctx, command, c, &needs)
		if err != nil {
			return err
		}
		defer e.labDown(stack)
	}
	onPath, err := checkPathFor(command, c, needs)
	if err != nil {
		return err
	}
	cg, applied, err := needs.applyLimits(c.DSN)
	if err != nil {
		return err
	}
	if cg != nil {
		defer cg.Close()
	}
	target, err := needs.open(ctx, c, cg)
	if err != nil {
		return err
	}
	if onPath {
		lock, err := lockPath(c.Path, command)
		if err != nil {
			return err
		}
		defer lock.Release()
	}
	dir, err := createRunDir(c.Out, e.newRun(command, c, needs, applied, target))
	if err != nil {
		return err
	}
	// logs/ is calibra's own (results.Create); no link is followed all
	// the same, and a FIFO there does not hang the run.
	logFile, err := safefs.OpenWrite(dir.File("logs", "calibra.log"), os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	prog := progress.New(e.Stderr, c.Progress, e.StderrTTY)
	prog.LogTo(logFile)
	prog.Phase("calibra %s: %s, run directory %s", e.Version, command, dir.Path)
	live := e.follow(ctx, dir.Path, prog)

	s := &Session{env: e, dir: dir, target: target, prog: prog, path: c.Path, command: command, limits: applied, cgroup: cg, live: live, metrics: board}
	s.announceMetrics(ep)
	if cg != nil {
		s.cacheBytes = needs.Limits.Spec.MemoryBytes
	}
	if needs.Storage != nil {
		s.path = needs.Storage.Path
	}
	if target != nil {
		err = s.runTarget(ctx, body)
	} else {
		err = s.observed(ctx, body)
	}
	return e.finish(ctx, dir, logFile, prog, live, c.JSON, fullDisk(err, s.path, command, c, needs))
}

// open opens the database the command needs (none: nil), and checks
// that a --dsn account may do what the command does.
func (needs Needs) open(ctx context.Context, c *Config, cg *limits.Cgroup) (engine.Engine, error) {
	if !needs.Database {
		return nil, nil
	}
	cfg := c.engineConfig()
	cfg.MaxConnections, cfg.Cgroup = needs.MaxConns, cg
	target, err := openTarget(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	if c.DSN != "" && needs.Rights != nil {
		if err := needs.Rights(ctx, target); err != nil {
			return nil, err
		}
	}
	return target, nil
}

// createRunDir makes the run directory at out, or at the default path
// for the run's start and label when out is "".
func createRunDir(out string, run *results.Run) (*results.Dir, error) {
	if out == "" {
		var err error
		if out, err = results.DefaultPath(run.StartedAt, run.Meta.Label); err != nil {
			return nil, err
		}
	}
	return results.Create(out, run)
}

// printable is label without terminal escapes: compare and report print
// it.
func printable(label string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, label)
}

// checkPathFor checks --path, and its free space for what command needs,
// when it is the storage under test: unless the command checked its own
// targets, or works only on a --dsn server. It reports whether it is.
func checkPathFor(command string, c *Config, needs Needs) (bool, error) {
	if needs.Storage != nil || (c.DSN != "" && needs.Database) {
		return false, nil
	}
	need, what := spaceNeed(command, c, needs)
	return true, CheckPath(c.Path, need, what)
}

// lockPath takes the path's lock for command, saying who holds it.
func lockPath(path, command string) (*pathlock.Lock, error) {
	lock, err := pathlock.Acquire(path, command)
	var held *pathlock.HeldError
	if errors.As(err, &held) {
		return nil, fault.Input("wait for it to finish, or stop it; a lock of a killed calibra frees itself", "%v", err)
	}
	var in *fault.InputError
	if errors.As(err, &in) {
		return nil, err // a lock file calibra refuses says so itself
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lock, nil
}

// newRun is the run's record as it starts: what ran, where, on what.
func (e Env) newRun(command string, c *Config, needs Needs, applied *results.AppliedLimits, target engine.Engine) *results.Run {
	var storage results.Storage
	switch {
	case needs.Storage != nil:
		storage = *needs.Storage
	case c.DSN == "" || !needs.Database:
		storage = observe.Storage(c.Path)
	}
	if c.WALPath != "" && c.DSN == "" && needs.Database {
		wal := observe.Storage(c.WALPath)
		storage.WAL = &wal
	}
	if c.Replicas > 0 && c.DSN == "" && needs.Database {
		at := c.ReplicaPath
		if at == "" {
			at = c.Path
		}
		replicas := observe.Storage(at)
		storage.Replicas = &replicas
	}
	run := &results.Run{StartedAt: time.Now().UTC(), Meta: results.Meta{ToolVersion: e.Version, ToolCommit: e.Commit, Command: command,
		Label: c.Label, Seed: c.Seed, Host: observe.Host(), Storage: storage, Study: needs.Study, Limits: applied}}
	if run.Meta.Study == nil && needs.Flags != nil {
		run.Meta.Study = needs.Flags()
	}
	if target != nil {
		info := target.Describe()
		run.Meta.Engine = &info
	}
	return run
}

// finish records how the run ended (err), writes its report and summary
// and, with --json, its results on stdout. Bad input that only the server
// could reveal (a schema already built, none to check) leaves no run:
// its one sentence says it all.
func (e Env) finish(ctx context.Context, dir *results.Dir, logFile *os.File, prog *progress.Printer, live Live, asJSON bool, err error) error {
	if fault.Code(err) == fault.ExitInput && ctx.Err() == nil {
		measured := false
		_ = dir.Update(func(r *results.Run) {
			for _, st := range r.Steps {
				measured = measured || st.Status == results.StatusComplete
			}
		})
		if !measured {
			// By handle, in the parent results.Create checked.
			_ = safefs.RemoveAll(filepath.Dir(dir.Path), filepath.Base(dir.Path))
			if live != nil {
				live.End(true)
			}
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
	if e.Baseline != nil {
		if berr := e.judgeBaseline(context.WithoutCancel(ctx), dir, prog); err == nil {
			err = berr
		}
	}
	recorded := ""
	if e.Record != nil {
		// However the run ended (complete, failed, interrupted): the
		// store lists it as results.json says.
		recorded = e.Record(context.WithoutCancel(ctx), dir.Path)
	}
	if live != nil {
		// After the record: the run is never without one.
		live.End(false)
	}
	if rerr := report.Write(dir.Path); rerr != nil {
		prog.Phase("warning: report.html and report.md not written: %v (calibra report %s makes them again)", rerr, dir.Path)
	}
	e.summary(dir, prog, status)
	if recorded != "" {
		fmt.Fprintln(e.Stderr, recorded)
	}
	if asJSON {
		if r, lerr := results.Load(dir.Path); lerr == nil {
			enc := json.NewEncoder(e.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(r)
		}
	}
	if status == results.StatusInterrupted {
		return fault.ErrInterrupted
	}
	return err
}

// judgeBaseline judges the finished run against its baseline and keeps
// the verdict in results.json. A store that cannot be read is a warning
// and no verdict, as a store that cannot be written is for recording.
func (e Env) judgeBaseline(ctx context.Context, dir *results.Dir, prog *progress.Printer) error {
	r, err := results.Load(dir.Path)
	if err != nil {
		return err
	}
	b, err := e.Baseline(ctx, dir.Path, r)
	if err != nil {
		prog.Phase("warning: the run was not judged against its baseline: %v", err)
		b = &results.Baseline{Verdict: results.BaselineNone, Reason: "the results store could not be read: " + strings.Join(strings.Fields(err.Error()), " ")}
	}
	if err := dir.Update(func(r *results.Run) { r.Baseline = b }); err != nil {
		return err
	}
	if b.Verdict == results.BaselineHostBusy {
		prog.Phase("warning: the run's storage was not judged against its baseline: %s", b.Reason)
	}
	if b.Regressed {
		return &fault.RegressionError{Reason: b.Reason}
	}
	return nil
}

// openTarget opens the engine, or with --instances N a group of N managed
// instances of it, each in its own directory (InstancePath) under the
// path and the WAL's path.
func openTarget(ctx context.Context, c *Config, cfg engine.Config) (engine.Engine, error) {
	if c.Instances <= 1 {
		return engine.Open(ctx, c.Engine, cfg)
	}
	members := make([]engine.Engine, c.Instances)
	for k := range members {
		mc := cfg
		mc.Path = InstancePath(c.Path, k+1)
		if c.WALPath != "" {
			mc.WALPath = InstancePath(c.WALPath, k+1)
		}
		for _, top := range []string{c.Path, c.WALPath} {
			if top == "" {
				continue
			}
			// calibra-instances and its members are calibra's own,
			// made fresh or taken only as such (safefs.MkdirOwn): the
			// server and clean use them by name.
			dir, err := safefs.MkdirOwn(top, InstancesDir, 0o755)
			if err == nil {
				_, err = safefs.MkdirOwn(dir, strconv.Itoa(k+1), 0o755)
			}
			if err != nil {
				return nil, fmt.Errorf("instance %d: %w", k+1, err)
			}
		}
		m, err := engine.Open(ctx, c.Engine, mc)
		if err != nil {
			return nil, err
		}
		members[k] = m
	}
	return engine.NewInstances(members), nil
}

// updateEngine records the engine as it now runs (version, settings).
func (s *Session) updateEngine() error {
	info := s.target.Describe()
	return s.dir.Update(func(r *results.Run) { r.Meta.Engine = &info })
}

func (s *Session) runTarget(ctx context.Context, body StepFunc) error {
	s.target.SetServerLog(s.dir.File("logs", "server.log"))
	// fresh is a data directory this command made and could not start: it
	// holds nothing of the user's, so nothing half-made stays (a setting
	// the server refused at its first start).
	var fresh *engine.Local
	defer func() {
		if err := s.target.Stop(); err != nil {
			s.prog.Phase("warning: %v", err)
		}
		if fresh != nil {
			for _, dir := range []string{fresh.LogDir, fresh.DataDir} {
				if dir != "" {
					// Made by this command beneath --path or --wal-path
					// (both checked by CheckPath); removed by handle.
					_ = safefs.RemoveAll(filepath.Dir(dir), filepath.Base(dir))
				}
			}
		}
	}()
	if local := s.target.Local(); local != nil {
		info := s.target.Describe()
		s.prog.Phase("starting the managed %s %s in %s", engine.Title(info.Name), info.Version, local.DataDir)
	}
	initialised, err := s.target.Start(ctx, s.env.Group)
	if local := s.target.Local(); local != nil {
		if initialised {
			s.prog.Phase("initialised a new data directory %s", local.DataDir)
		}
		for _, r := range local.Repairs {
			s.prog.Phase("%s", r)
		}
	}
	if err != nil {
		if initialised {
			fresh = s.target.Local()
		}
		return err
	}
	if err := s.updateEngine(); err != nil {
		return err
	}
	return s.observed(ctx, body)
}

// observed runs body with the OS and database observers sampling, keeps
// the steps it returns, and writes timeseries.csv. Observation is
// evidence, not the measurement: if the observers cannot start, the steps
// run anyway and say why.
func (s *Session) observed(ctx context.Context, body StepFunc) error {
	cfg := observe.Config{Path: s.path}
	if s.target != nil {
		// The database's evidence (waits, cache hits) comes from one
		// server; several instances' host figures are all of them.
		members := engine.MembersOf(s.target)
		cfg.Engine = members[0]
		if len(members) > 1 {
			log := s.logWord()
			evidence := fmt.Sprintf("the database's evidence (waits, cache hits, %s) is server 1's of %d; the host's and the storage's figures are all of theirs", log, len(members))
			if g, ok := s.target.(engine.Group); ok && g.SharedData() {
				evidence = fmt.Sprintf("the database's evidence (waits, cache hits, %s) is node 1's of the %d cluster nodes, their replication counters each node's own; the host's and the storage's figures are all of theirs", log, len(members))
			}
			if err := s.warnOnce(evidence); err != nil {
				return err
			}
		}
		if local := s.target.Local(); local != nil {
			cfg.WALPath = local.LogDir
		}
	}
	obs, err := observe.Start(ctx, cfg)
	if err != nil {
		s.prog.Phase("warning: observers not started: %v", err)
	} else {
		s.obs = obs
		if s.metrics != nil {
			s.metrics.Observe(obs.Latest)
		}
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
func (s *Session) warnOnce(warnings ...string) error {
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
func (s *Session) keep(ctx context.Context, steps []results.Step, err error) error {
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
		st.LimitedBy, st.LimitedByEvidence = judgeWindow(st.Kind, st.Observe, driver, results.DevicePoints(s.dir.Steps()), s.words())
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

// restartCold restarts the managed server with its files out of the OS page cache,
// reporting whether it could be; the database observer holds its polls
// meanwhile (they are not failures) and reconnects at the next edge.
func (s *Session) restartCold(ctx context.Context) (dropped bool, err error) {
	restart := func() error {
		r, ok := s.target.(engine.ColdRestarter)
		if !ok {
			return fault.Input("leave cold_start out of the study", "%s", engine.NotSupported(s.target, "a cold restart"))
		}
		dropped, err = r.Restart(ctx, s.env.Group)
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
func (s *Session) edge() func() time.Time {
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

// writeFile writes a run-directory file atomically, making its
// directories under the run directory as calibra's own.
func writeFile(dir *results.Dir, data []byte, parts ...string) error {
	path := dir.File(parts...)
	if _, err := safefs.MkdirAllOwn(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return results.WriteFileAtomic(path, data)
}

// words are the engine's terms; the neutral ones for a step with no
// database (the device's), as terms gives them for no engine.
func (s *Session) words() terms.Words {
	name := ""
	if s.target != nil {
		name = s.target.Name()
	}
	return terms.Of(name)
}

// logWord is the engine's name for its log of changes.
func (s *Session) logWord() string { return s.words().Log }
