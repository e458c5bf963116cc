package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/server"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/limits"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
	"github.com/calibra-bench/calibra/internal/study"
)

// durabilityDir is the audit's instance's directory on a lab's file
// system.
const durabilityDir = "calibra-durability"

// Durability is the power-loss audit.
type Durability struct {
	Clients, Cycles, Warehouses int
	Load                        time.Duration
	FsyncOff                    bool
	// PageProtection is the engine's torn-page protection: "on" (its
	// default) or "off" (full_page_writes, innodb_doublewrite).
	PageProtection string
	// Matrix runs the torn-write matrix: page protection on and off
	// against a torn and an atomic cut, Cycles each.
	Matrix     bool
	Thresholds []string
}

// PlanDurability checks the audit and, with --lab, builds the lab where
// the cuts can reach it: done takes it down after the run (it is never
// nil when err is nil).
func (e Env) PlanDurability(ctx context.Context, c *Config, d Durability) (needs Needs, body StepFunc, done func(), err error) {
	clients, cycles, load, warehouses, thresholds := d.Clients, d.Cycles, d.Load, d.Warehouses, d.Thresholds
	var p Problems
	c.Validate(&p)
	if c.DSN != "" {
		p.Add("drop --dsn: the audit needs the managed instance", "the audit kills and restarts the server, which it cannot do to a server it does not manage (--dsn)")
	}
	if clients < 1 {
		p.Add("give a whole number of 1 or more", "--clients %d is not positive", clients)
	}
	if cycles < 1 {
		p.Add("give a whole number of 1 or more", "--cycles %d is not positive", cycles)
	}
	if load <= 0 {
		p.Add("give a duration such as 10s", "--load %s is not positive", load)
	}
	if warehouses < 1 {
		p.Add("give a whole number of 1 or more", "--warehouses %d is not positive", warehouses)
	}
	if d.PageProtection != "on" && d.PageProtection != "off" {
		p.Add("give --page-protection on or off", "--page-protection %q is neither on nor off", d.PageProtection)
	}
	if d.Matrix {
		checkMatrix(&p, c, d)
	}
	p.most("--clients", clients, MaxWorkers)
	p.most("--cycles", cycles, MaxRepeat)
	p.longest("--load", load, MaxWindow)
	need, err := spaceFor("--warehouses", float64(warehouses), bytesPerWarehouse)
	if err != nil {
		p = append(p, err)
	}
	var ths []study.Threshold
	for _, expr := range thresholds {
		t, err := study.ParseThreshold(expr)
		if err == nil && (t.Kind != results.KindDurability || !results.KnownMetric(t.Kind, t.Metric)) {
			err = fmt.Errorf("threshold %q names no durability metric", expr)
		}
		if err != nil {
			p.Add("write it as 'durability.lost_acknowledged == 0'", "--threshold: %v", err)
		}
		ths = append(ths, t)
	}
	if err := p.Err(); err != nil {
		return Needs{}, nil, nil, err
	}
	needs = Needs{Database: true, MaxConns: clients + 2, Bytes: need}
	done = func() {}
	var stack *lab.Stack
	if c.Lab != "" {
		var err error
		if d.Matrix {
			c.Lab = withTorn(c.Lab, matrixCuts[0].unit)
		}
		if stack, err = e.labUp(ctx, "durability", c, &needs); err != nil {
			return Needs{}, nil, nil, err
		}
		done = func() { e.labDown(stack) }
		c.Lab = ""             // built here, where the cuts can reach it
		c.DataChecksums = true // the fresh instance's pages checksummed
		// A fresh instance of its own on the lab (whose platter stays
		// between commands): a calibration leaves a database its unsafe
		// commits broke. No server runs there: a lab's servers end
		// with the command that mounted it.
		// The lab's file system is mounted on calibra-lab/fs, calibra's
		// own (checked by the stack): removed and made there by handle.
		if err := safefs.RemoveAll(stack.Mount, durabilityDir); err != nil {
			done()
			return Needs{}, nil, nil, err
		}
		if c.Path, err = safefs.MkdirOwn(stack.Mount, durabilityDir, 0o755); err != nil {
			done()
			return Needs{}, nil, nil, err
		}
		needs.Storage.Path = c.Path
	}
	return needs, func(ctx context.Context, s *Session) ([]results.Step, error) {
		return audit(ctx, s, stack, durability.Config{Clients: clients, Load: load, Cycles: cycles, Warehouses: warehouses, Places: []string{s.path, s.dir.Path}}, d, ths)
	}, done, nil
}

// auditHost is the machine under test as the audit sees it: any managed
// engine that can crash (engine.Crasher), on a lab or not.
type auditHost struct {
	s     *Session
	stack *lab.Stack
	data  engine.Engine // the server the clients commit on, nodes[0]
	crash engine.Crasher
	nodes []engine.Engine // a cluster's, each with a data directory of its own; else data
	// cell names the matrix's combination in the torn cuts' records ("").
	cell string
}

func (h *auditHost) Engine() engine.Engine { return h.data }

// Nodes are the servers of the database: a cluster's nodes, each checked
// after a recovery (durability.Cluster).
func (h *auditHost) Nodes() []engine.Engine { return h.nodes }

// Rejoined is how each node of a cluster came back at the last recovery.
func (h *auditHost) Rejoined() []string {
	if r, ok := h.s.target.(interface{ Rejoined() []string }); ok {
		return r.Rejoined()
	}
	return nil
}

// dataDirs are every node's data directory.
func (h *auditHost) dataDirs() []string {
	dirs := make([]string, len(h.nodes))
	for i, n := range h.nodes {
		dirs[i] = n.Local().DataDir
	}
	return dirs
}

// auditNodes are the servers of the database the audit checks: the
// engine, or a cluster's nodes, which serve one database (the clients
// commit on the first, the cut takes every node, the recovery restarts
// the cluster, and every node is checked). Independent instances are
// refused: each is its own database.
func auditNodes(e engine.Engine) ([]engine.Engine, error) {
	g, ok := e.(engine.Group)
	if !ok || len(g.Members()) == 1 {
		return []engine.Engine{e}, nil
	}
	if !g.SharedData() {
		return nil, fault.Input("run the audit on one instance (drop --instances)", "the power-loss audit checks one database, and this target has %d independent instances", len(g.Members()))
	}
	return g.Members(), nil
}

func (h *auditHost) Cut() error {
	if h.stack == nil {
		h.crash.Kill()
		return nil
	}
	// The storage dies first, at once (given even milliseconds, a
	// destaging cache would write back what a power cut loses); then every
	// process of the server: PostgreSQL's backends run in sessions of their
	// own, and one waiting for a lock a dead one held would wait for ever.
	h.stack.Kill()
	for _, dir := range h.dataDirs() {
		killProcessesIn(dir)
	}
	h.crash.Kill()
	h.stack.PowerCut()
	return nil
}

// killProcessesIn sends SIGKILL to every process whose working directory
// is dir (a server's processes all work in its data directory) until none
// is left, or for 30 s: one in the middle of an I/O dies when the I/O
// fails.
func killProcessesIn(dir string) {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		left := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
				_ = unix.Kill(pid, unix.SIGKILL)
				left = true
			}
		}
		if !left {
			return
		}
	}
}

// Recover brings the storage back and starts the server on what the cut
// left. A data directory the cut took is a finding, never initialised
// anew: the engine's Start would make an empty database in its place.
func (h *auditHost) Recover(ctx context.Context) (string, error) {
	fsck := ""
	if h.stack != nil {
		if err := h.stack.Restart(ctx); err != nil {
			return "", &durability.RecoveryError{Class: durability.NoRestart, Err: fmt.Errorf("the storage did not come back: %w", err)}
		}
		fsck = h.stack.Fsck
	}
	for _, dir := range h.dataDirs() {
		if !server.Initialised(dir) {
			return fsck, &durability.RecoveryError{Class: durability.FilesGone,
				Err: fmt.Errorf("the data directory %s, or its record of a complete initialisation, is gone after the cut", dir)}
		}
	}
	_, err := h.s.target.Start(ctx, h.s.env.Group)
	return fsck, err
}

// TornCut moves the last torn cut's record into the run directory,
// raw/torn-cut-CYCLE.json; nil when the lab tears nothing.
func (h *auditHost) TornCut(cycle int) (*results.TornCut, error) {
	if h.stack == nil {
		return nil, nil
	}
	rec, err := h.stack.TakeTornRecord()
	if rec == nil || err != nil {
		return nil, err
	}
	name := fmt.Sprintf("torn-cut-%s%d.json", h.cell, cycle)
	f, err := safefs.CreateFile(h.s.dir.File("raw", name), 0o644)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(rec.JSON())
	if err = errors.Join(err, f.Close()); err != nil {
		return nil, err
	}
	return &results.TornCut{Seed: rec.Seed, Unit: rec.Unit, InFlight: len(rec.Writes), Torn: rec.Torn, Record: "raw/" + name}, nil
}

// WrittenBytes is what the lab's device has been sent to write since it
// came up (0 without a lab).
func (h *auditHost) WrittenBytes() (int64, error) {
	if h.stack == nil {
		return 0, nil
	}
	return lab.WrittenBytes(h.stack.Device())
}

// WritesInFlight is how many writes the lab's device has in flight (0
// without a lab).
func (h *auditHost) WritesInFlight() (int, error) {
	if h.stack == nil {
		return 0, nil
	}
	return lab.WritesInFlight(h.stack.Device())
}

// Durable writes out what the servers wrote, on their file systems only
// (another audit on this host keeps what it has not flushed).
func (h *auditHost) Durable() error {
	dirs := h.dataDirs()
	for _, n := range h.nodes {
		if l := n.Local(); l.LogDir != "" {
			dirs = append(dirs, l.LogDir)
		}
	}
	return limits.SyncFS(dirs...)
}

func audit(ctx context.Context, s *Session, stack *lab.Stack, cfg durability.Config, d Durability, ths []study.Threshold) ([]results.Step, error) {
	started := time.Now()
	body := &results.Durability{PowerCut: "server+cache", Calibration: d.FsyncOff, CutDuring: "load"}
	if stack == nil {
		body.PowerCut = "server"
		body.Note = "without --lab only the server is killed: the OS page cache survives, so this tests crash recovery, not the storage"
		s.prog.Phase("warning: %s", body.Note)
	}
	crash, ok := s.target.(engine.Crasher)
	if !ok || s.target.Local() == nil {
		return nil, fault.Input("run the audit on a managed instance", "%s", engine.NotSupported(s.target, "the power-loss audit"))
	}
	nodes, err := auditNodes(s.target)
	if err != nil {
		return nil, err
	}
	if _, ok := s.target.(durability.Protector); d.Matrix && !ok {
		return nil, fault.Input("drop --matrix", "%s", engine.NotSupported(s.target, "turning off torn-page protection"))
	}
	if d.FsyncOff {
		if err := calibrate(ctx, s, body); err != nil {
			return nil, err
		}
	}
	if body.PageProtection, err = protect(ctx, s, d.PageProtection == "on"); err != nil {
		return nil, err
	}
	if stack != nil && stack.Parts.TornUnit > 0 {
		cfg.CutInCheckpoint, body.CutDuring = true, "checkpoint"
	}
	dev := ""
	if stack != nil {
		dev = stack.Device()
	} else {
		dev = observeDevice(s)
	}
	s.prog.Phase("flush probe: 8 KiB write+fdatasync at queue depth 1 for up to 3 s (1000 flushes are enough)")
	fp, err := durability.ProbeFlush(ctx, s.path, dev)
	if err != nil {
		return nil, fmt.Errorf("flush probe: %w", err)
	}
	body.Flush = fp
	s.prog.Phase("flush probe: %.0f fsyncs/s (%.2f ms): %s", fp.FsyncsPerS, fp.LatencyMsMean, fp.Verdict)
	if err := auditBuild(ctx, s, &cfg); err != nil {
		return nil, err
	}
	cfg.Journal = s.dir.File("raw", "durability-acks.txt")
	cfg.Phase = s.prog.Phase
	h := &auditHost{s: s, stack: stack, data: nodes[0], crash: crash, nodes: nodes}
	if d.Matrix {
		err = runMatrix(ctx, h, cfg, body)
	} else {
		err = durability.Run(ctx, cfg, h, body)
	}
	st := newStep(results.KindDurability, "durability", started, body)
	if err != nil {
		return []results.Step{st}, err
	}
	st.Status = results.StatusComplete
	s.prog.Phase("durability: %d cycles, %d acknowledged (%d present, %d missing, %d unverifiable), %d committed unacknowledged, %d pages damaged",
		body.Cycles, body.Acknowledged, body.PresentAcknowledged, body.LostAcknowledged, body.UnverifiableAcknowledged, body.CommittedUnacknowledged, body.PagesDamaged)
	if err := judgeDurability(s, st, ths); err != nil {
		return []results.Step{st}, err
	}
	return []results.Step{st}, auditFailed(body, d, ths)
}

// auditFailed fails the run on what the audit found, whatever the number
// of cycles: an acknowledged commit missing or not verifiable, a damaged
// page. A threshold that names such a figure judges it instead (exit 3 on
// a failure, with its verdict). The calibration and the matrix are
// experiments whose losses and damage are what they show: thresholds
// alone judge them.
func auditFailed(body *results.Durability, d Durability, ths []study.Threshold) error {
	if d.FsyncOff || d.Matrix {
		return nil
	}
	named := func(metric string) bool {
		return slices.ContainsFunc(ths, func(t study.Threshold) bool { return t.Kind == results.KindDurability && t.Metric == metric })
	}
	found := durability.Failures(body, named)
	if len(found) == 0 {
		return nil
	}
	msg := "the audit found " + strings.Join(found, " and ")
	if body.Note != "" {
		msg += " (" + body.Note + ")"
	}
	return errors.New(msg)
}

// auditBuild builds the audit's database when the instance holds none,
// and gives cfg what the build was.
func auditBuild(ctx context.Context, s *Session, cfg *durability.Config) error {
	bi, err := oltp.Built(ctx, s.target)
	if err != nil {
		return err
	}
	if bi == nil {
		s.prog.Phase("building the TPC-C-like Database: %d warehouses", cfg.Warehouses)
		if _, err := oltp.Build(ctx, s.target, oltp.BuildConfig{Warehouses: cfg.Warehouses, Seed: 1, Workers: min(runtime.NumCPU(), cfg.Clients),
			NoTemplate: true}, s.prog); err != nil {
			return fmt.Errorf("build the audit's Database: %w", err)
		}
		if bi, err = oltp.Built(ctx, s.target); err != nil || bi == nil {
			return fmt.Errorf("read the audit's build: %v", err)
		}
	}
	cfg.Warehouses, cfg.Seed, cfg.CLastLoad = bi.Warehouses, bi.Seed, bi.CLastLoad
	return nil
}

// judgeDurability records the thresholds' verdicts on the audit's step;
// a failed one is a ThresholdError.
func judgeDurability(s *Session, st results.Step, ths []study.Threshold) error {
	var verdicts []results.Verdict
	var failed []string
	for _, t := range ths {
		v := results.Verdict{Threshold: t.Expr, Step: "durability"}
		if m, ok := results.LookupMetric(st, t.Metric); ok {
			v.Value, v.OK = &m.Value, t.Holds(m.Value)
		} else {
			v.Reason = "not measured"
		}
		if !v.OK {
			failed = append(failed, t.Expr)
		}
		verdicts = append(verdicts, v)
	}
	if len(verdicts) > 0 {
		if err := s.dir.Update(func(r *results.Run) { r.Verdicts = verdicts }); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return &fault.ThresholdError{Failed: failed}
	}
	return nil
}

// calibrate restarts the server with commits acknowledged before they are
// durable: a lab must then show losses.
func calibrate(ctx context.Context, s *Session, body *results.Durability) error {
	u, ok := s.target.(durability.Calibrator)
	if !ok {
		return fault.Input("drop --unsafe-fsync-off", "%s", engine.NotSupported(s.target, "the calibration with commits not flushed"))
	}
	body.UnsafeSettings = u.UnsafeCommits()
	if err := s.target.Stop(); err != nil {
		return err
	}
	if _, err := s.target.Start(ctx, s.env.Group); err != nil {
		return err
	}
	if err := s.updateEngine(); err != nil {
		return err
	}
	s.prog.Phase("calibration: the server runs with %s; a lab must show losses", body.UnsafeSettings)
	return nil
}

// protect turns the engine's torn-page protection off, restarting the
// server, and returns the setting; on, the engine keeps its own (on unless
// an engine setting says otherwise).
func protect(ctx context.Context, s *Session, on bool) (string, error) {
	if on {
		return "on", nil
	}
	p, ok := s.target.(durability.Protector)
	if !ok {
		return "", fault.Input("drop --page-protection off", "%s", engine.NotSupported(s.target, "turning off torn-page protection"))
	}
	setting := p.PageProtection(false)
	if err := s.target.Stop(); err != nil {
		return "", err
	}
	if _, err := s.target.Start(ctx, s.env.Group); err != nil {
		return "", err
	}
	s.prog.Phase("page protection off: the server runs with %s", setting)
	return setting, s.updateEngine()
}

// observeDevice is the block device under the session's path, as
// meta.storage recorded it.
func observeDevice(s *Session) string {
	r, err := results.Load(s.dir.Path)
	if err != nil {
		return ""
	}
	return r.Meta.Storage.Device
}
