package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
)

// The defaults of the oltp commands' flags.
const (
	DefaultOLTPMode    = string(oltp.ModeProcedures)
	DefaultOLTPProfile = string(oltp.ProfileSpec)
	DefaultSLAMetric   = oltp.SLAART
	// DriverAuto is --driver's default: the polling driver where it can.
	DriverAuto = "auto"
)

// OLTPBuild is an oltp build step: the schema's size and how it is loaded.
type OLTPBuild struct {
	Warehouses, Workers int
	Rebuild             bool
	implicit            bool // a run's build of a missing schema (oltp.BuildConfig.Implicit)
}

// OLTPLoad is what a timed run and a ramp share: the schema, the mode,
// the pacing and the timing of each window.
type OLTPLoad struct {
	Build            OLTPBuild
	Mode, Keying     string
	Profile          string
	RatePerUser      float64
	Rampup, Duration time.Duration
	Reset            bool
	// Connections, when above 0, serves the users as terminals on that
	// many connections (oltp.RunConfig.Connections).
	Connections int
	// DriverThreads is the polling driver's threads (oltp.RunConfig
	// .DriverThreads); 0 is calibra's choice.
	DriverThreads int
	// Driver is "auto" (the polling driver where the dialect polls) or
	// oltp.DriverGoroutines (oltp.RunConfig.Driver).
	Driver string
	// WarehousesSet says the warehouses were asked for (Build.Warehouses
	// 0 is "as built").
	WarehousesSet bool
	// Partition ("i/N") and StartAt (RFC 3339 or Unix seconds) split a
	// timed run over processes on an existing server (oltp.Partition);
	// empty for one process.
	Partition, StartAt string
}

// Ramp is an oltp ramp step: a load at each user count to an SLA.
type Ramp struct {
	Load                OLTPLoad
	From, To, By, ARTAt int
	SLA                 time.Duration
	SLAMetric           string
	Fall                float64
}

// PlanOLTPBuild checks an oltp build and returns what it needs and its work.
func PlanOLTPBuild(c *Config, b OLTPBuild) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	if b.Warehouses <= 0 {
		p.Add("give a whole number of 1 or more", "--warehouses %d is not positive", b.Warehouses)
	}
	if b.Workers <= 0 {
		p.Add("give a whole number of 1 or more", "--load-workers %d is not positive", b.Workers)
	}
	p.most("--load-workers", b.Workers, MaxWorkers)
	p.managedConns(c, b.Workers+10, fmt.Sprintf("--load-workers %d", b.Workers))
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	need, err := spaceFor("--warehouses", float64(b.Warehouses), bytesPerWarehouse)
	if err != nil {
		return Needs{}, nil, err
	}
	return Needs{Database: true, MaxConns: b.Workers + 10, Bytes: need, Rights: rightsOf(oltp.Dialects)}, func(ctx context.Context, s *Session) ([]results.Step, error) {
		st, err := buildStep(ctx, s, b, c.Seed)
		return []results.Step{st}, err
	}, nil
}

// PlanOLTPRun checks a timed run of users users.
func PlanOLTPRun(c *Config, l OLTPLoad, users int) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	if users <= 0 {
		p.Add("give a whole number of 1 or more", "--users %d is not positive", users)
	}
	p.most("--users", users, MaxUsers)
	cfg := l.check(c, users, &p)
	l.checkServers(c, users, cfg, &p)
	if users <= MaxUsers {
		p.managedConns(c, l.needs(users).MaxConns, fmt.Sprintf("--users %d", users))
	}
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	cfg.Users = users
	return l.needs(users), func(ctx context.Context, s *Session) ([]results.Step, error) {
		return runSteps(ctx, s, cfg, l, c.Seed)
	}, nil
}

// PlanRamp checks a ramp.
func PlanRamp(c *Config, r Ramp) (Needs, StepFunc, error) {
	from, to, by, artAt, sla, slaMetric, fall, l := r.From, r.To, r.By, r.ARTAt, r.SLA, r.SLAMetric, r.Fall, r.Load
	var p Problems
	c.Validate(&p)
	if from <= 0 {
		p.Add("give a whole number of 1 or more", "--from %d is not positive", from)
	}
	if by <= 0 {
		p.Add("give a whole number of 1 or more", "--step %d is not positive", by)
	}
	if to < from {
		p.Add("give a --to at or above --from", "the ramp from %d to %d users is empty", from, to)
	}
	p.most("--to", to, MaxUsers)
	if to <= MaxUsers {
		p.managedConns(c, l.needs(to).MaxConns, fmt.Sprintf("--to %d", to))
	}
	if sla <= 0 {
		p.Add("give a duration such as 2s or 50ms", "--sla %s is not positive", sla)
	}
	p.longest("--sla", sla, MaxLatency)
	if slaMetric != oltp.SLAART && slaMetric != oltp.SLAP90 {
		p.Add("use art or p90", "--sla-metric %q is not an SLA metric", slaMetric)
	}
	if artAt < 0 || artAt > 0 && by > 0 && (artAt < from || artAt > to || (artAt-from)%by != 0) {
		p.Add(fmt.Sprintf("give one of the ramp's loads (%d to %d by %d), or 0", from, to, by), "--art-at %d is not a load of the ramp", artAt)
	}
	if fall <= 0 || fall >= 100 {
		p.Add("give a per cent between 0 and 100, such as 5", "--fall %g is not between 0 and 100", fall)
	}
	run := l.check(c, max(to, 1), &p)
	l.checkServers(c, from, run, &p)
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	cfg := oltp.RampConfig{Run: run, From: from, To: to, By: by, SLA: sla, SLAMetric: slaMetric,
		ARTAtUsers: artAt, FallPct: fall, MinSteps: 2}
	return l.needs(to), func(ctx context.Context, s *Session) ([]results.Step, error) {
		return rampSteps(ctx, s, cfg, l, c.Seed)
	}, nil
}

// PlanOLTPCheck checks an oltp check: the consistency conditions alone.
func PlanOLTPCheck(c *Config) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	return Needs{Database: true, MaxConns: 10, Bytes: minFree}, func(ctx context.Context, s *Session) ([]results.Step, error) {
		started := time.Now()
		cons, w, err := oltp.CheckBuilt(ctx, s.target)
		if err != nil {
			return nil, err
		}
		step := newStep(results.KindOLTPCheck, "oltp check", started, &results.OLTPCheck{Warehouses: w, Consistency: cons})
		if !cons.OK {
			return []results.Step{step}, errors.New("the database fails the consistency conditions")
		}
		return []results.Step{step}, nil
	}, nil
}

// bytesPerWarehouse is a generous estimate of one warehouse on disk, with
// its template copy, for the free-space check.
const bytesPerWarehouse = 2 * 160 << 20

// minFree is what the managed instance needs beyond its data: the cluster
// itself and WAL.
const minFree = 1 << 30

func buildStep(ctx context.Context, s *Session, b OLTPBuild, seed uint64) (results.Step, error) {
	started := time.Now()
	out, err := oltp.Build(ctx, s.target, oltp.BuildConfig{Warehouses: b.Warehouses, Seed: seed, Workers: b.Workers, Rebuild: b.Rebuild, Implicit: b.implicit}, s.prog)
	if out == nil {
		out = &results.OLTPBuild{Workload: oltp.Workload, Warehouses: b.Warehouses, Seed: seed, Workers: b.Workers}
	}
	step := newStep(results.KindOLTPBuild, "oltp build", started, out)
	if err == nil {
		s.prog.Phase("oltp build: %d warehouses, %.0f MB in %.1f s (%.1f MB/s): load %.1f s, indexes %.1f s, vacuum %.1f s",
			b.Warehouses, float64(out.DBBytes)/1e6, out.TotalS, out.MBPerS, out.LoadS, out.IndexS, out.VacuumS)
	}
	return step, err
}

// parseKeying reads --keying-thinking: off, on (the specification's times)
// or a positive scale of them.
func parseKeying(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "off", "false", "0":
		return 0, nil
	case "on", "true", "spec":
		return 1, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		// NaN and infinities parse, and would run as "off" or never end.
		return 0, fault.Input("use off, on, or a positive scale such as 0.1", "--keying-thinking %q is not off, on or a scale", s)
	}
	if v > MaxKeying {
		return 0, fault.Input(fmt.Sprintf("--keying-thinking must be at most %d times the specification's times", MaxKeying), "--keying-thinking %s is too slow a scale", s)
	}
	return v, nil
}

// checkServers refuses before anything starts what a load of users on
// several servers (--instances, a cluster's nodes) would refuse once they
// run; nothing for a --dsn server.
func (l *OLTPLoad) checkServers(c *Config, users int, run oltp.RunConfig, p *Problems) {
	if c.DSN != "" {
		return
	}
	run.Users = users
	if err := oltp.CheckServers(run, max(c.Instances, engine.Servers(c.Engine, c.Options))); err != nil {
		*p = append(*p, err)
	}
}

// check validates the flags for at most maxUsers users and returns the run
// they describe (Users left to the caller).
func (l *OLTPLoad) check(c *Config, maxUsers int, p *Problems) oltp.RunConfig {
	scale, err := parseKeying(l.Keying)
	if err != nil {
		*p = append(*p, err)
	}
	warehouses := 0
	if l.WarehousesSet {
		warehouses = l.Build.Warehouses
		if warehouses <= 0 {
			p.Add("give a whole number of 1 or more", "--warehouses %d is not positive", warehouses)
		} else if err := oltp.CheckUsers(maxUsers, warehouses, scale); err != nil {
			*p = append(*p, err)
		}
		if _, err := l.buildNeed(); warehouses > 0 && c.DSN == "" && err != nil {
			// The managed instance builds them when it holds no schema.
			*p = append(*p, err)
		}
	}
	switch {
	case !slices.Contains(oltp.Modes, oltp.Mode(l.Mode)):
		p.Add("use procedures, client or client-simple", "--mode %q is not a transaction mode", l.Mode)
	default:
		if err := oltp.CheckMode(c.Engine, oltp.Mode(l.Mode)); err != nil {
			*p = append(*p, err)
		}
	}
	if !slices.Contains(oltp.Profiles, oltp.Profile(l.Profile)) {
		p.Add("use spec or hammerdb", "--profile %q is not a workload profile", l.Profile)
	}
	if l.RatePerUser < 0 {
		p.Add("give a rate such as 10, or 0 for a closed loop", "--rate-per-user %g is negative", l.RatePerUser)
	} else if l.RatePerUser > MaxRatePerUser {
		p.Add(fmt.Sprintf("--rate-per-user must be at most %d transactions a second", MaxRatePerUser), "--rate-per-user %g is too high", l.RatePerUser)
	}
	if l.RatePerUser > 0 && scale > 0 {
		p.Add("choose one: an open loop (--rate-per-user) or keying and thinking", "--rate-per-user and --keying-thinking both pace the users")
	}
	if l.Rampup < 0 {
		p.Add("give a duration such as 30s or 2m", "--rampup %s is negative", l.Rampup)
	}
	if l.Duration <= 0 {
		p.Add("give a duration such as 30s or 5m", "--duration %s is not positive", l.Duration)
	}
	p.longest("--rampup", l.Rampup, MaxWindow)
	p.longest("--duration", l.Duration, MaxWindow)
	if l.Build.Workers <= 0 {
		p.Add("give a whole number of 1 or more", "--load-workers %d is not positive", l.Build.Workers)
	}
	p.most("--load-workers", l.Build.Workers, MaxWorkers)
	if l.Connections < 0 {
		p.Add("give a whole number of 1 or more, or 0 for a connection per user", "--connections %d is negative", l.Connections)
	}
	p.most("--connections", l.Connections, MaxManagedConns)
	if l.DriverThreads < 0 {
		p.Add("give a whole number of 1 or more, or 0 for calibra's choice", "--driver-threads %d is negative", l.DriverThreads)
	}
	p.most("--driver-threads", l.DriverThreads, MaxDriverThreads)
	driver := l.Driver
	switch driver {
	case "", DriverAuto:
		driver = ""
	case oltp.DriverGoroutines:
	default:
		p.Add("give auto or goroutines", "--driver %q is not a driver", l.Driver)
	}
	if l.Reset && c.DSN != "" {
		p.Add("drop --reset, or use the managed instance", "--reset needs the managed instance's template and cannot be used with --dsn")
	}
	part, startAt := l.checkSplit(c, maxUsers, warehouses, p)
	return oltp.RunConfig{Warehouses: warehouses, Mode: oltp.Mode(l.Mode), KeyingThinking: scale, RatePerUser: l.RatePerUser,
		Rampup: l.Rampup, Duration: l.Duration, Connections: l.Connections, Seed: c.Seed, Profile: oltp.Profile(l.Profile),
		Partition: part, StartAt: startAt, DriverThreads: l.DriverThreads, Driver: driver}
}

// checkSplit validates --partition and --start-at: a partition drives a
// server other processes drive too, so it needs --dsn and a shared start.
func (l *OLTPLoad) checkSplit(c *Config, users, warehouses int, p *Problems) (oltp.Partition, time.Time) {
	var part oltp.Partition
	var at time.Time
	var err error
	if l.StartAt != "" {
		if at, err = oltp.ParseStartAt(l.StartAt, time.Now()); err != nil {
			*p = append(*p, err)
		}
	}
	if l.Partition == "" {
		return part, at
	}
	if part, err = oltp.ParsePartition(l.Partition); err != nil {
		*p = append(*p, err)
		return part, at
	}
	if c.DSN == "" {
		p.Add("give the server every partition drives with --dsn or --dsn-file", "--partition splits the load on an existing server, and the managed instance is private to one calibra")
	}
	if l.StartAt == "" {
		p.Add("give every partition the same --start-at, such as a minute from now (date -u -d +1min +%FT%TZ)", "--partition needs --start-at, so that every partition's window starts at the same instant")
	}
	if warehouses == 0 {
		warehouses = part.Of // as built: checked when the run reads the schema
	}
	if err := oltp.CheckPartition(part, users, warehouses); err != nil {
		*p = append(*p, err)
	}
	return part, at
}

// needs is what a load of at most users users needs from the session.
func (l *OLTPLoad) needs(users int) Needs {
	conns := users
	if l.Connections > 0 {
		conns = min(users, l.Connections)
	}
	build, _ := l.buildNeed() // refused by check
	return Needs{Database: true, MaxConns: conns + l.Build.Workers + 10, Bytes: minFree, Build: build}
}

// buildNeed is the build a load makes when the managed instance holds no
// schema: --warehouses, else 1.
func (l *OLTPLoad) buildNeed() (*BuildNeed, error) {
	w := 0
	if l.WarehousesSet {
		w = l.Build.Warehouses
	}
	return implicitBuild(w)
}

// implicitBuild is a load's build of warehouses (at least 1) when it finds
// no schema, with the space 'oltp build' asks for it.
func implicitBuild(warehouses int) (*BuildNeed, error) {
	w := max(warehouses, 1)
	need, err := spaceFor("--warehouses", float64(w), bytesPerWarehouse)
	if err != nil {
		return nil, err
	}
	return &BuildNeed{Bytes: need, What: fmt.Sprintf("a build of %d warehouses", w)}, nil
}

// prepareLoad resets the database if asked, and builds the schema first
// when the managed instance has none.
func prepareLoad(ctx context.Context, s *Session, cfg oltp.RunConfig, l OLTPLoad, seed uint64) ([]results.Step, error) {
	if l.Reset {
		s.prog.Phase("oltp: recreating the database from its loaded template")
		r, ok := s.target.(engine.Resetter)
		if !ok {
			return nil, fault.Input("drop --reset", "%s", engine.NotSupported(s.target, "a reset to the loaded template"))
		}
		if err := r.RestoreTemplate(ctx); err != nil {
			return nil, err
		}
	}
	bi, err := oltp.Built(ctx, s.target)
	if err != nil || bi != nil {
		return nil, err
	}
	if s.target.Local() == nil {
		return nil, fault.Input("build it first with 'calibra oltp build --dsn ...'", "the database of --dsn holds no TPC-C-like schema")
	}
	b := l.Build
	b.Warehouses, b.implicit = max(cfg.Warehouses, 1), true
	// Checked before anything was made when no data directory was there;
	// checked now for a data directory without a schema.
	need, err := implicitBuild(b.Warehouses)
	if err == nil {
		err = s.checkBuildSpace(need)
	}
	if err != nil {
		return nil, err
	}
	s.prog.Phase("oltp: no schema on the managed instance; building %d warehouses first (an implicit build never replaces a larger loaded template)", b.Warehouses)
	st, err := buildStep(ctx, s, b, seed)
	return []results.Step{st}, err
}

// runSteps prepares the schema, then runs the timed window and checks the
// database's consistency after it.
func runSteps(ctx context.Context, s *Session, cfg oltp.RunConfig, l OLTPLoad, seed uint64) ([]results.Step, error) {
	steps, err := prepareLoad(ctx, s, cfg, l, seed)
	if err != nil {
		return steps, err
	}
	cfg.Edge, cfg.OnTick, cfg.Watch = s.edge(), s.onTick(), s.watch()
	started := time.Now()
	out, rec, err := oltp.Run(ctx, s.target, cfg, s.prog)
	if out == nil {
		return steps, err
	}
	if werr := writeRecord(s, rec, "oltp"); werr != nil && err == nil {
		err = werr
	}
	if rec != nil && rec.Window != nil {
		if werr := writeFile(s.dir, rec.Window, "raw", s.rawPrefix+"oltp-window.hlog"); werr != nil && err == nil {
			err = werr
		}
	}
	if !cfg.Partition.Whole() && rec != nil {
		// Exact seconds, for 'calibra merge' to add up the partitions'.
		var buf bytes.Buffer
		if werr := oltp.WriteTimeseries(&buf, rec.Ticks); werr == nil {
			werr = writeFile(s.dir, buf.Bytes(), "raw", s.rawPrefix+"oltp-ticks.csv")
			if werr != nil && err == nil {
				err = werr
			}
		}
	}
	if !cfg.Partition.Whole() {
		// The others may still be writing when this window ends.
		out.Missing["consistency"] = "not checked by a partition, as the other partitions may still be running: run 'calibra oltp check' once all have finished"
	} else if err == nil && out.Missing["nopm"] == "" {
		s.prog.Phase("oltp run: checking consistency")
		if out.Consistency, err = oltp.Check(ctx, s.target); err == nil && !out.Consistency.OK {
			err = errors.New("the database fails the consistency conditions after the run")
		}
	}
	name := fmt.Sprintf("oltp %d warehouses %d users %s", out.Warehouses, out.Users, out.Mode)
	if !cfg.Partition.Whole() {
		name += " partition " + cfg.Partition.String()
	}
	steps = append(steps, newStep(results.KindOLTP, name, started, out))
	return steps, err
}

// writeRecord keeps a load's timeline: its seconds join timeseries.csv,
// and its per-tick latency histograms go under raw/ as name-latency.hlog.
func writeRecord(s *Session, rec *oltp.Record, name string) error {
	if rec == nil || len(rec.Ticks) == 0 {
		return nil
	}
	s.ticks = append(s.ticks, rec.Ticks...)
	return writeFile(s.dir, rec.Histograms, "raw", s.rawPrefix+name+"-latency.hlog")
}

// rampSteps prepares the schema, then runs the ramp; each load's seconds
// and histograms are kept like a timed run's, and its CPU figures come
// from the observers over its window.
func rampSteps(ctx context.Context, s *Session, cfg oltp.RampConfig, l OLTPLoad, seed uint64) ([]results.Step, error) {
	steps, err := prepareLoad(ctx, s, cfg.Run, l, seed)
	if err != nil {
		return steps, err
	}
	cfg.Run.Edge, cfg.Run.OnTick, cfg.Run.Watch = s.edge(), s.onTick(), s.watch()
	loads := &loadWindows{s: s}
	cfg.OnStep = loads.keep(func(o *results.OLTP) string { return fmt.Sprintf("ramp-%du", o.Users) })
	started := time.Now()
	out, err := oltp.Ramp(ctx, s.target, cfg, s.prog)
	for i := range out.Steps {
		loads.judge(i, &out.Steps[i].LoadEvidence, &out.Steps[i].LimitedBy, &out.Steps[i].LimitedByEvidence)
	}
	if err == nil {
		err = loads.err
	}
	name := fmt.Sprintf("ramp %d-%d users by %d", cfg.From, cfg.To, cfg.By)
	return append(steps, newStep(results.KindRamp, name, started, out)), err
}

// Scale is an oltp scale step: one load on the first 1, 2, 4... servers
// of --instances.
type Scale struct {
	Load    OLTPLoad
	Users   int    // in all, dealt round-robin over the servers
	Servers string // ascending counts, such as 1,2,4
}

// PlanScale checks a scale step: its counts, and enough instances for the
// largest.
func PlanScale(c *Config, sc Scale) (Needs, StepFunc, error) {
	var p Problems
	c.Validate(&p)
	servers, err := parseServers(sc.Servers)
	if err != nil {
		p = append(p, err)
	} else if last := servers[len(servers)-1]; last > max(c.Instances, 1) {
		p.Add(fmt.Sprintf("give --instances %d or more (target.instances in a study)", last),
			"--servers goes up to %d, and --instances starts %d", last, max(c.Instances, 1))
	}
	p.most("--users", sc.Users, MaxUsers)
	if sc.Users <= 0 {
		p.Add("give a whole number of 1 or more", "--users %d is not positive", sc.Users)
	} else if err == nil && sc.Users < servers[len(servers)-1] {
		p.Add(fmt.Sprintf("give --users %d or more", servers[len(servers)-1]), "%d users leave some of the %d servers without load", sc.Users, servers[len(servers)-1])
	}
	run := sc.Load.check(c, sc.Users, &p)
	if run.Connections > 0 || !run.Partition.Whole() {
		p.Add("drop --connections and --partition", "a scale step deals its users over servers from one process, each user on a connection of its own")
	}
	if err := p.Err(); err != nil {
		return Needs{}, nil, err
	}
	run.Users = sc.Users
	cfg := oltp.ScaleConfig{Run: run, Servers: servers}
	return sc.Load.needs(run.Users), func(ctx context.Context, s *Session) ([]results.Step, error) {
		return scaleSteps(ctx, s, cfg, sc.Load, c.Seed)
	}, nil
}

// parseServers reads --servers: server counts, ascending, from 1.
func parseServers(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || len(out) > 0 && n <= out[len(out)-1] {
			return nil, fault.Input("list rising counts of servers, such as 1,2,4", "--servers %q is not a rising list of server counts", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// scaleSteps prepares the schema on every instance, then runs the load on
// each count of servers; each point's seconds and histograms are kept like
// a timed run's, and its evidence and verdict come from its own window.
func scaleSteps(ctx context.Context, s *Session, cfg oltp.ScaleConfig, l OLTPLoad, seed uint64) ([]results.Step, error) {
	steps, err := prepareLoad(ctx, s, cfg.Run, l, seed)
	if err != nil {
		return steps, err
	}
	cfg.Run.Edge, cfg.Run.OnTick, cfg.Run.Watch = s.edge(), s.onTick(), s.watch()
	loads := &loadWindows{s: s}
	cfg.OnStep = loads.keep(func(o *results.OLTP) string { return fmt.Sprintf("scale-%ds", max(len(o.Instances), 1)) })
	started := time.Now()
	out, err := oltp.Scale(ctx, s.target, cfg, s.prog)
	if out == nil {
		return steps, err
	}
	for i := range out.Points {
		loads.judge(i, &out.Points[i].LoadEvidence, &out.Points[i].LimitedBy, &out.Points[i].LimitedByEvidence)
	}
	if err == nil {
		err = loads.err
	}
	name := fmt.Sprintf("scale %s servers %d users", joinInts(cfg.Servers), cfg.Run.Users)
	return append(steps, newStep(results.KindScale, name, started, out)), err
}

// loadWindows keeps what a step of several loads (a ramp, a scale) needs
// of each load: its timeline and histograms like a timed run's, the
// observers' record of its window and the driver's share over it.
type loadWindows struct {
	s       *Session
	windows []*results.Observe
	drivers []*float64
	err     error // the first failure to keep a timeline
}

// keep is the loads' OnStep: each load's record goes under raw/ by name.
func (w *loadWindows) keep(name func(*results.OLTP) string) func(*results.OLTP, *oltp.Record) {
	return func(o *results.OLTP, rec *oltp.Record) {
		if w.err == nil {
			w.err = writeRecord(w.s, rec, name(o))
		}
		var win *results.Observe
		if w.s.obs != nil && o.WindowStart != nil && o.WindowEnd != nil {
			win = w.s.obs.Window(*o.WindowStart, *o.WindowEnd)
		}
		var d *float64
		if o.Driver != nil {
			d = &o.Driver.MachineSharePct
		}
		w.windows, w.drivers = append(w.windows, win), append(w.drivers, d)
	}
}

// judge gives load i its window's evidence and verdict, when it has one.
func (w *loadWindows) judge(i int, ev *results.LoadEvidence, by *string, byEv **results.Evidence) {
	if i < len(w.windows) && w.windows[i] != nil {
		// Judged first: that states the window's device share, which the
		// evidence takes.
		*by, *byEv = judgeWindow(results.KindOLTP, w.windows[i], w.drivers[i], results.DevicePoints(w.s.dir.Steps()), w.s.words())
		ev.Observed(w.windows[i])
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
