package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/durability"
	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/study"
)

func (a *app) durabilityCommand() *cobra.Command {
	var c common
	var clients, cycles, warehouses int
	var load time.Duration
	var fsyncOff bool
	var thresholds []string
	cmd := &cobra.Command{
		Use:   "durability",
		Short: "The power-loss audit: are commits the database acknowledged still there after power fails?",
		Long: `Clients run the TPC-C-like New-Order and Payment on the managed instance
(built with --warehouses when it holds no build) and journal each one (the
order's id in its district, the customer paid; in the run directory,
raw/durability-acks.txt) only after its COMMIT returned. Under that load the
power is cut; the machine recovers; every journaled commit must still be
there, and the TPC-C consistency conditions must hold. Per cycle:
acknowledged commits, acknowledged-then-lost ones (the violation),
committed-but-unacknowledged ones (in flight at the cut; allowed), the
recovery time and the consistency conditions.

On a lab stack (--lab) a power cut is SIGKILL of the lab's NBD server
first (a volatile cache dies with it; the flash cache keeps its journaled
contents), then of every server process; then the file system check,
mount and the server's crash recovery. Without --lab only the server is
killed: the OS page cache survives, so that tests the database's crash
recovery, not the storage (a missing fsync goes unseen).

--unsafe-fsync-off is the calibration: the same audit with fsync=off, which
must show losses on a lab, proving the harness can see one. A flush-rate
probe (8 KiB write+fdatasync at queue depth 1) flags a volatile write cache.
A threshold such as 'durability.lost_acknowledged == 0' makes a loss exit 3.`,
		Example: `  calibra durability --lab hdd+flash-cache --cycles 5 --path /var/tmp/calibra \
      --threshold 'durability.lost_acknowledged == 0'
  calibra durability --lab hdd+flash-cache --cycles 2 --unsafe-fsync-off --path /var/tmp/calibra
  calibra durability --path /mnt/array      # server crash only: not a test of the device`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var p problems
			c.validate(&p)
			if c.dsn != "" {
				p.add("drop --dsn: the audit needs the managed instance", "the audit kills and restarts the server, which it cannot do to a server it does not manage (--dsn)")
			}
			if clients < 1 {
				p.add("give a whole number of 1 or more", "--clients %d is not positive", clients)
			}
			if cycles < 1 {
				p.add("give a whole number of 1 or more", "--cycles %d is not positive", cycles)
			}
			if load <= 0 {
				p.add("give a duration such as 10s", "--load %s is not positive", load)
			}
			if warehouses < 1 {
				p.add("give a whole number of 1 or more", "--warehouses %d is not positive", warehouses)
			}
			var ths []study.Threshold
			for _, expr := range thresholds {
				t, err := study.ParseThreshold(expr)
				if err == nil && (t.Kind != results.KindDurability || !results.KnownMetric(t.Kind, t.Metric)) {
					err = fmt.Errorf("threshold %q names no durability metric", expr)
				}
				if err != nil {
					p.add("write it as 'durability.lost_acknowledged == 0'", "--threshold: %v", err)
				}
				ths = append(ths, t)
			}
			if err := p.err(); err != nil {
				return err
			}
			needs := sessionNeeds{database: true, maxConns: clients + 2}
			var stack *lab.Stack
			if c.lab != "" {
				var err error
				if stack, err = a.labUp(cmd.Context(), &c, &needs); err != nil {
					return err
				}
				defer a.labDown(stack)
				c.lab = "" // built here, where the cuts can reach it
				// A fresh instance of its own on the lab: a calibration run
				// leaves a database that fsync=off has broken.
				c.path = filepath.Join(stack.Mount, "calibra-durability")
				if _, err := postgres.Remove(c.path); err != nil {
					return wrap(err)
				}
				if err := os.MkdirAll(c.path, 0o755); err != nil {
					return wrap(err)
				}
				needs.storage.Path = c.path
			}
			return a.runSession(cmd, &c, needs, func(ctx context.Context, s *session) ([]results.Step, error) {
				return a.audit(ctx, s, stack, durability.Config{Clients: clients, Load: load, Cycles: cycles, Warehouses: warehouses}, fsyncOff, ths)
			})
		},
	}
	c.register(cmd)
	f := cmd.Flags()
	f.IntVar(&clients, "clients", 4, "clients committing at once")
	f.IntVar(&cycles, "cycles", 3, "load, power cut and recovery cycles")
	f.IntVar(&warehouses, "warehouses", 1, "TPC-C-like warehouses to build when the instance holds no build")
	f.DurationVar(&load, "load", 10*time.Second, "commits before each power cut")
	f.BoolVar(&fsyncOff, "unsafe-fsync-off", false, "calibration: run the server with fsync=off, which must lose commits on a lab")
	f.StringArrayVar(&thresholds, "threshold", nil, "e.g. 'durability.lost_acknowledged == 0' (exit 3 when it fails; repeatable)")
	return cmd
}

// auditHost is the machine under test as the audit sees it.
type auditHost struct {
	a      *app
	s      *session
	stack  *lab.Stack
	target *postgres.Target
}

func (h *auditHost) Engine() engine.Engine { return h.target }

func (h *auditHost) Cut() error {
	if h.stack == nil {
		h.target.Managed.Kill()
		return nil
	}
	// The storage dies first, at once (given even milliseconds, a
	// destaging cache would write back what a power cut loses); then every
	// process of the server: its backends run in sessions of their own, and
	// one waiting for a lock a dead one held would wait for ever.
	h.stack.Kill()
	killProcessesIn(h.target.Managed.DataDir)
	h.target.Managed.Kill()
	h.stack.PowerCut()
	return nil
}

// killProcessesIn sends SIGKILL to every process whose working directory
// is dir (a PostgreSQL server's processes all work in its data directory)
// until none is left, or for 30 s: one in the middle of an I/O dies when
// the I/O fails.
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

func (h *auditHost) Recover(ctx context.Context) (string, error) {
	fsck := ""
	if h.stack != nil {
		if err := h.stack.Restart(ctx); err != nil {
			return "", err
		}
		fsck = h.stack.Fsck
	}
	// The killed server's lock file may have come back empty or torn from
	// the cut, which PostgreSQL refuses to start over; the audit killed
	// that server, so the file is known stale (an operator removes it too).
	_ = os.Remove(filepath.Join(h.target.Managed.DataDir, "postmaster.pid"))
	_, err := h.target.Start(ctx, h.a.group)
	return fsck, err
}

func (h *auditHost) Durable() error {
	unix.Sync()
	return nil
}

func (a *app) audit(ctx context.Context, s *session, stack *lab.Stack, cfg durability.Config, fsyncOff bool, ths []study.Threshold) ([]results.Step, error) {
	started := time.Now()
	body := &results.Durability{PowerCut: "server+cache", Calibration: fsyncOff}
	if stack == nil {
		body.PowerCut = "server"
		body.Note = "without --lab only the server is killed: the OS page cache survives, so this tests crash recovery, not the storage"
		s.prog.Phase("warning: %s", body.Note)
	}
	if fsyncOff {
		s.target.Managed.Overrides = map[string]string{"fsync": "off"}
		if err := s.target.Stop(); err != nil {
			return nil, err
		}
		if _, err := s.target.Start(ctx, a.group); err != nil {
			return nil, err
		}
		if err := s.dir.Update(func(r *results.Run) { r.Meta.Engine = &s.target.Info }); err != nil {
			return nil, err
		}
		s.prog.Phase("calibration: the server runs with fsync=off; a lab must show losses")
	}
	dev := ""
	if stack != nil {
		dev = stack.Device()
	} else {
		dev = observeDevice(s)
	}
	s.prog.Phase("flush probe: 8 KiB write+fdatasync at queue depth 1 for a few seconds")
	fp, err := durability.ProbeFlush(ctx, s.path, dev)
	if err != nil {
		return nil, fmt.Errorf("flush probe: %w", err)
	}
	body.Flush = fp
	s.prog.Phase("flush probe: %.0f fsyncs/s (%.2f ms): %s", fp.FsyncsPerS, fp.LatencyMsMean, fp.Verdict)
	bi, err := oltp.Built(ctx, s.target)
	if err != nil {
		return nil, err
	}
	if bi == nil {
		s.prog.Phase("building the TPC-C-like database: %d warehouses", cfg.Warehouses)
		if _, err := oltp.Build(ctx, s.target, oltp.BuildConfig{Warehouses: cfg.Warehouses, Seed: 1, Workers: min(runtime.NumCPU(), cfg.Clients)}, s.prog); err != nil {
			return nil, fmt.Errorf("build the audit's database: %w", err)
		}
		if bi, err = oltp.Built(ctx, s.target); err != nil || bi == nil {
			return nil, fmt.Errorf("read the audit's build: %v", err)
		}
	}
	cfg.Warehouses, cfg.Seed, cfg.CLastLoad = bi.Warehouses, bi.Seed, bi.CLastLoad
	cfg.Journal = s.dir.File("raw", "durability-acks.txt")
	cfg.Phase = s.prog.Phase
	h := &auditHost{a: a, s: s, stack: stack, target: s.target}
	err = durability.Run(ctx, cfg, h, body)
	st := newStep(results.KindDurability, "durability", started, body)
	if err != nil {
		return []results.Step{st}, err
	}
	st.Status = results.StatusComplete
	s.prog.Phase("durability: %d cycles, %d acknowledged, %d lost, %d committed unacknowledged", body.Cycles, body.Acknowledged, body.LostAcknowledged, body.CommittedUnacknowledged)
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
			return []results.Step{st}, err
		}
	}
	if len(failed) > 0 {
		return []results.Step{st}, &fault.ThresholdError{Failed: failed}
	}
	return []results.Step{st}, nil
}

// observeDevice is the block device under the session's path, as
// meta.storage recorded it.
func observeDevice(s *session) string {
	r, err := results.Load(s.dir.Path)
	if err != nil {
		return ""
	}
	return r.Meta.Storage.Device
}

func writeDurabilitySummary(b *strings.Builder, d *results.Durability) {
	kind := "power cut (the storage and the database server killed)"
	if d.PowerCut == "server" {
		kind = "server crash only (not a test of the storage)"
	}
	if d.Calibration {
		kind += ", calibration with fsync=off"
	}
	fmt.Fprintf(b, "  durability %d cycles of %s, %d clients, %.0f s of commits each\n", d.Cycles, kind, d.Clients, d.LoadS)
	fmt.Fprintf(b, "  %-10s %10d     acknowledged commits lost (the violation) of %d acknowledged\n", "lost", d.LostAcknowledged, d.Acknowledged)
	fmt.Fprintf(b, "  %-10s %10d     committed but never acknowledged (in flight at the cut; allowed)\n", "in flight", d.CommittedUnacknowledged)
	var violated []string
	checked := 0
	for _, c := range d.PerCycle {
		if c.Consistency != nil {
			checked++
			if !c.Consistency.OK {
				violated = append(violated, strconv.Itoa(c.Cycle))
			}
		}
	}
	if checked > 0 {
		verdict := fmt.Sprintf("hold after all %d recoveries checked", checked)
		if len(violated) > 0 {
			verdict = "violated after the recovery of cycle " + strings.Join(violated, ", ")
		}
		fmt.Fprintf(b, "  %-10s %10s     TPC-C consistency conditions (3.3.2.1-4) %s\n", "consistent", map[bool]string{true: "yes", false: "no"}[len(violated) == 0], verdict)
	}
	if d.RecoveryS != nil {
		fmt.Fprintf(b, "  %-10s %10.1f s   the slowest recovery (file system check, mount, database crash recovery)\n", "recovery", *d.RecoveryS)
	}
	if f := d.Flush; f != nil {
		fmt.Fprintf(b, "  %-10s %10.0f /s  fsyncs at queue depth 1: %s\n", "flushes", f.FsyncsPerS, f.Verdict)
	}
	if d.Note != "" {
		fmt.Fprintf(b, "  note       %s\n", d.Note)
	}
}
