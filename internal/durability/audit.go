// Package durability is the power-loss audit: clients run the TPC-C-like
// New-Order and Payment and journal each one (the order's id in its
// district, the customer paid) only after its COMMIT returned; power is cut
// under that load; the machine recovers; every journaled commit must still
// be there, and the TPC-C consistency conditions must hold. A commit in flight at the cut may survive (it was
// committed but never acknowledged: allowed); an acknowledged commit that
// is gone is the violation the audit exists to find.
package durability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/safefs"
)

// Host is what the audit needs from the machine under test.
type Host interface {
	// Engine is the database under test, the TPC-C-like schema built.
	Engine() engine.Engine
	// Cut is the power failure: the server (and, on a lab, the volatile
	// cache) killed at once.
	Cut() error
	// Recover brings the machine back: storage checked and mounted, the
	// server started and accepting connections. It returns what the file
	// system check said; a failure of a class it knows (the storage
	// gone, the data directory gone) is a *RecoveryError.
	Recover(ctx context.Context) (fsck string, err error)
	// Durable makes the starting state durable (a sync of the storage).
	Durable() error
}

// CutRecorder is a host whose cuts tear writes (a lab with torn=): what
// the last cut did, its record kept in the run directory for the cycle.
type CutRecorder interface {
	TornCut(cycle int) (*results.TornCut, error)
}

// WriteCounter is a host that counts the writes sent to its storage:
// the bytes since it came up, and the writes in flight now.
type WriteCounter interface {
	WrittenBytes() (int64, error)
	WritesInFlight() (int, error)
}

// checkpointLead is how long after a checkpoint begins the cut comes at
// the earliest when the audit cuts during one, and checkpointWait the
// latest: in between it comes once the storage has two writes in flight
// (a commit's log write and a page of the checkpoint's, say).
const (
	checkpointLead = 200 * time.Millisecond
	checkpointWait = 2 * time.Second
)

// Protector is an engine whose torn-page protection (PostgreSQL's
// full_page_writes, InnoDB's doublewrite buffer) can be set for its next
// start; it returns the setting.
type Protector interface {
	PageProtection(on bool) string
}

// Cluster is a Host whose database several servers serve (a Galera
// cluster): after each recovery the acknowledged commits are checked on
// every node, and the nodes against each other.
type Cluster interface {
	// Nodes are the servers, the first the one the clients commit on.
	Nodes() []engine.Engine
	// Rejoined says how each node came back at the last recovery (e.g.
	// "bootstrap", "ist", "copy of node 1"); nil when it cannot say.
	Rejoined() []string
}

// Calibrator is an engine that can run, from its next start, with
// commits acknowledged before they are durable (PostgreSQL's fsync=off,
// InnoDB's log written and flushed once a second): the audit's
// calibration, which must then see losses. It returns those settings.
type Calibrator interface {
	UnsafeCommits() string
}

// Config is one audit.
type Config struct {
	Clients int
	Load    time.Duration // of commits before each cut
	Cycles  int
	// Journal is the file of acknowledged commits, a line each:
	// "CYCLE new-order W D O_ID" or "CYCLE payment C_W C_D C_ID".
	Journal    string
	Warehouses int
	Seed       uint64
	CLastLoad  int // the build's C_LAST constant (oltp.BuildInfo)
	// CutInCheckpoint makes each cut come while a checkpoint writes the
	// server's pages, the moment torn-page protection exists for.
	CutInCheckpoint bool
	// Places are the directories the audit's servers work in (--path, the
	// run directory): a message that quotes them says nothing of the
	// data by the words in their names.
	Places []string
	Phase  func(format string, args ...any)
}

// Run runs the audit's cycles and returns what it found. A recovery that
// fails is a finding of its class (the cycle's acknowledged commits could
// then not be verified; without a server that came back, it has no
// recovery time); it ends the audit, and out.Note says which cycles did
// not run. The findings, not the cycles run, decide the exit (Failures).
func Run(ctx context.Context, cfg Config, host Host, out *results.Durability) error {
	out.Clients, out.LoadS, out.Journal = cfg.Clients, cfg.Load.Seconds(), cfg.Journal
	// A new file, never one found at the name (an --out used again may
	// hold an earlier audit's): made exclusively, not through a link.
	if err := os.Remove(cfg.Journal); err != nil && !errors.Is(err, os.ErrNotExist) { // safefs: unlinks the name in the audit's directory, made by MkdirOwn on the lab
		return err
	}
	jf, err := safefs.CreateFile(cfg.Journal, 0o644)
	if err != nil {
		return err
	}
	defer jf.Close()
	journal := &journal{w: bufio.NewWriter(jf)}
	if err := durableStart(ctx, host); err != nil {
		return err
	}
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		c, err := runCycle(ctx, cfg, host, cycle, journal)
		if err != nil {
			return err
		}
		add(out, c)
		if c.Outcome == string(TornPage) {
			// Later cycles would find the same damaged pages again.
			if cycle < cfg.Cycles {
				out.Note = fmt.Sprintf("cycle %d found damaged pages; the audit stopped there (%s unrun): later cycles would count the same pages again", cycle, unrun(cycle+1, cfg.Cycles))
			}
			return nil
		}
		if c.RecoveryError == "" {
			continue
		}
		what := "did not recover"
		if c.RecoveryS != nil {
			what = "recovered, but its data could not be read"
		}
		out.Note = fmt.Sprintf("cycle %d %s (%s: %s), so its %d acknowledged commits could not be verified", cycle, what, c.Outcome, c.RecoveryError, c.UnverifiableAcknowledged)
		if cycle < cfg.Cycles {
			out.Note += "; the audit stopped there, and " + unrun(cycle+1, cfg.Cycles) + " did not run"
		}
		return nil
	}
	return nil
}

// Failures says, a phrase each, what the audit found that fails a run:
// acknowledged commits missing or not verifiable, and damaged pages;
// those of metrics a threshold names are left to its verdict.
func Failures(d *results.Durability, named func(metric string) bool) []string {
	var out []string
	for _, f := range []struct {
		metric    string
		n         int64
		one, many string
	}{
		{"lost_acknowledged", d.LostAcknowledged, "acknowledged commit missing after its recovery", "acknowledged commits missing after their recovery"},
		{"unverifiable_acknowledged", d.UnverifiableAcknowledged, "acknowledged commit that could not be verified", "acknowledged commits that could not be verified"},
		{"pages_damaged", d.PagesDamaged, "damaged page", "damaged pages"},
	} {
		switch {
		case f.n == 0 || named(f.metric):
		case f.n == 1:
			out = append(out, "1 "+f.one)
		default:
			out = append(out, fmt.Sprintf("%d %s", f.n, f.many))
		}
	}
	return out
}

// durableStart makes the starting state durable: a checkpoint, then a
// sync of the storage.
func durableStart(ctx context.Context, host Host) error {
	ctl, err := oltp.Connect(ctx, host.Engine())
	if err != nil {
		return err
	}
	err = ctl.Checkpoint(ctx)
	ctl.Close()
	if err != nil {
		return err
	}
	return host.Durable()
}

// runCycle is one load, power cut, recovery and verification.
func runCycle(ctx context.Context, cfg Config, host Host, cycle int, j *journal) (results.DurabilityCycle, error) {
	before, err := snapshot(ctx, host)
	if err != nil {
		return results.DurabilityCycle{}, fmt.Errorf("cycle %d: read the database before the load: %w", cycle, err)
	}
	during := "under"
	if cfg.CutInCheckpoint {
		during = "during a checkpoint under"
	}
	cfg.Phase("cycle %d of %d: %d clients run New-Order and Payment for %s, then the power is cut %s them", cycle, cfg.Cycles, cfg.Clients, cfg.Load, during)
	c := results.DurabilityCycle{Cycle: cycle}
	acked, err := load(ctx, cfg, host, cycle, j, &c)
	if ferr := j.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return results.DurabilityCycle{}, err
	}
	c.Acknowledged = acked.count()
	if r, ok := host.(CutRecorder); ok {
		if c.Torn, err = r.TornCut(cycle); err != nil {
			return c, fmt.Errorf("cycle %d: the torn cut's record: %w", cycle, err)
		}
	}
	start := time.Now()
	fsck, rerr := host.Recover(ctx)
	took, failed := time.Since(start).Seconds(), Class("")
	c.Fsck = fsck
	if rerr == nil {
		// The server came back: its recovery time, whatever the check says.
		c.RecoveryS = &took
		if rerr = check(ctx, host, before, acked, &c); rerr != nil {
			// The server came back but its data cannot be read.
			failed = classify(rerr, Corrupt, cfg.Places...)
		}
	} else {
		failed = classify(rerr, NoRestart, cfg.Places...)
	}
	if rerr != nil {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		c.RecoveryError = rerr.Error()
		if n := pagesNamed(messageWords(rerr.Error(), cfg.Places)); n > 0 {
			c.PagesDamaged, c.PageCheck = n, serverCheck
		}
		// Nothing was verified: no commit is known missing or present.
		c.LostAcknowledged, c.CommittedUnacknowledged = 0, 0
		c.UnverifiableAcknowledged = c.Acknowledged
	}
	c.PresentAcknowledged = c.Acknowledged - c.LostAcknowledged - c.UnverifiableAcknowledged
	c.Outcome = string(outcome(&c, failed))
	cfg.Phase("cycle %d: %s: %d acknowledged (%d present, %d missing, %d unverifiable), %d committed unacknowledged, %d pages damaged%s%s%s%s",
		cycle, c.Outcome, c.Acknowledged, c.PresentAcknowledged, c.LostAcknowledged, c.UnverifiableAcknowledged, c.CommittedUnacknowledged, c.PagesDamaged, tornNote(c.Torn),
		recoveryNote(c.RecoveryS), errNote(c.RecoveryError), consistencyNote(c.Consistency))
	return c, nil
}

// unrun names cycles from to to, e.g. "cycle 2" or "cycles 2 to 5".
func unrun(from, to int) string {
	if from == to {
		return fmt.Sprintf("cycle %d", from)
	}
	return fmt.Sprintf("cycles %d to %d", from, to)
}

func tornNote(t *results.TornCut) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(", %d of %d writes in flight torn (seed %d, %s)", t.Torn, t.InFlight, t.Seed, t.Record)
}

func recoveryNote(s *float64) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf(", recovered in %.1f s", *s)
}

func consistencyNote(c *results.Consistency) string {
	switch {
	case c == nil:
		return ""
	case c.OK:
		return ", consistency conditions hold"
	}
	var bad []string
	for _, chk := range c.Checks {
		if !chk.OK {
			bad = append(bad, chk.ID)
		}
	}
	return ", consistency conditions violated: " + strings.Join(bad, ", ")
}

func errNote(s string) string {
	if s == "" {
		return ""
	}
	return " (recovery failed: " + s + ")"
}

func add(out *results.Durability, c results.DurabilityCycle) {
	out.PerCycle = append(out.PerCycle, c)
	out.Cycles++
	out.Acknowledged += c.Acknowledged
	out.LostAcknowledged += c.LostAcknowledged
	out.UnverifiableAcknowledged += c.UnverifiableAcknowledged
	out.PresentAcknowledged += c.PresentAcknowledged
	out.CommittedUnacknowledged += c.CommittedUnacknowledged
	out.PagesDamaged += c.PagesDamaged
	if c.PageCheck != "" {
		out.PageCheck = c.PageCheck
	}
	if out.Outcomes == nil {
		out.Outcomes = map[string]int{}
	}
	out.Outcomes[c.Outcome]++
	if c.RecoveryS != nil && (out.RecoveryS == nil || *c.RecoveryS > *out.RecoveryS) {
		v := *c.RecoveryS
		out.RecoveryS = &v
	}
}

// journal is the acknowledged commits, written as they are acknowledged.
type journal struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (j *journal) line(format string, args ...any) {
	j.mu.Lock()
	fmt.Fprintf(j.w, format+"\n", args...)
	j.mu.Unlock()
}

func (j *journal) flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.w.Flush()
}

// acks is what a cycle's clients were told was committed.
type acks struct {
	mu       sync.Mutex
	orders   map[oltp.District][]int // o_ids
	payments map[oltp.Customer]int64
}

func (a *acks) count() int64 {
	var n int64
	for _, ids := range a.orders {
		n += int64(len(ids))
	}
	for _, p := range a.payments {
		n += p
	}
	return n
}

// state is what verification compares with: each district's next order
// id and each customer's payments in history, before the load.
type state struct {
	nextOID  map[oltp.District]int
	payments map[oltp.Customer]int64
}

func snapshot(ctx context.Context, host Host) (*state, error) {
	ctl, err := oltp.Connect(ctx, host.Engine())
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	st := &state{}
	if st.nextOID, err = oltp.NextOrderIDs(ctx, ctl); err != nil {
		return nil, err
	}
	st.payments, err = oltp.Payments(ctx, ctl)
	return st, err
}

// load runs the clients for cfg.Load, cuts the power under them, and
// returns what they were told was committed.
func load(ctx context.Context, cfg Config, host Host, cycle int, j *journal, c *results.DurabilityCycle) (*acks, error) {
	conns := make([]oltp.Session, cfg.Clients)
	for i := range conns {
		c, err := oltp.NewSession(ctx, host.Engine(), oltp.AuditMode)
		if err != nil {
			for _, o := range conns[:i] {
				o.Close()
			}
			return nil, err
		}
		conns[i] = c
	}
	a := &acks{orders: map[oltp.District][]int{}, payments: map[oltp.Customer]int64{}}
	if w, ok := host.(WriteCounter); ok {
		n, err := w.WrittenBytes()
		if err != nil {
			return nil, err
		}
		c.WrittenBytes = -n // the cut adds what was written by then
	}
	consts := tpcc.RunConstants(tpcc.NewRand(cfg.Seed, 0xD0, uint64(cycle)), tpcc.Constants{CLast: cfg.CLastLoad})
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i, tx := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := tpcc.NewRand(cfg.Seed, 0xD1, uint64(cycle), uint64(i))
			term := oltp.Terminal{W: i%cfg.Warehouses + 1, Warehouses: cfg.Warehouses, C: consts, Rng: rng}
			var no oltp.NewOrderInput
			var pay oltp.PaymentInput
			for n := 0; lctx.Err() == nil; n++ {
				if n%2 == 0 {
					term.NextNewOrder(&no)
					err := tx.NewOrder(lctx, &no)
					if err == nil {
						j.line("%d new-order %d %d %d", cycle, no.W, no.D, no.OID)
						a.mu.Lock()
						k := oltp.District{W: no.W, D: no.D}
						a.orders[k] = append(a.orders[k], no.OID)
						a.mu.Unlock()
					} else if !errors.Is(err, oltp.ErrRolledBack) && tx.Closed() {
						return
					}
					continue
				}
				term.NextPayment(&pay)
				if err := tx.Payment(lctx, &pay); err == nil {
					j.line("%d payment %d %d %d", cycle, pay.CW, pay.CD, pay.PaidC)
					a.mu.Lock()
					a.payments[oltp.Customer{W: pay.CW, D: pay.CD, C: pay.PaidC}]++
					a.mu.Unlock()
				} else if tx.Closed() {
					return
				}
			}
		}()
	}
	var cutErr error
	select {
	case <-time.After(cfg.Load):
		cutErr = cutUnder(lctx, cfg, host, c) // the clients are mid-commit
	case <-ctx.Done():
	}
	// After the cut every connection fails; the cancel ends the rest.
	stop()
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return a, cutErr
}

// cutUnder cuts the power, during a checkpoint when the config says,
// after counting what the load wrote.
func cutUnder(ctx context.Context, cfg Config, host Host, c *results.DurabilityCycle) error {
	var ckpt oltp.Control
	if cfg.CutInCheckpoint {
		var err error
		if ckpt, err = oltp.Connect(ctx, host.Engine()); err != nil {
			return err
		}
		defer ckpt.Close()
		go func() { _ = ckpt.Checkpoint(ctx) }() // fails at the cut
		time.Sleep(checkpointLead)
	}
	w, counts := host.(WriteCounter)
	if cfg.CutInCheckpoint && counts {
		for end := time.Now().Add(checkpointWait); time.Now().Before(end); time.Sleep(time.Millisecond) {
			if n, err := w.WritesInFlight(); err != nil || n > 1 {
				break
			}
		}
	}
	if counts {
		n, err := w.WrittenBytes()
		if err != nil {
			return err
		}
		c.WrittenBytes += n
	}
	return host.Cut()
}

// serverCheck is the page check of a cycle whose server named the damaged
// pages itself, refusing to recover or to read them.
const serverCheck = "the server's own page checksums"

// pageSigns are what PostgreSQL and InnoDB say of a damaged page (or
// control file), lower-cased; InnoDB words it many ways ("corrupted page
// 896", "[page id: space=9, page number=0] of corrupted file"), so a
// message that speaks of a page and of corruption counts too.
var pageSigns = []string{"invalid page in block", "page verification failed", "incorrect checksum in control file", "could not read block"}

// pagesNamed counts the pages a server named damaged when it refused to
// recover or to read them: each invalid block it names, else one for a
// damaged page it names without a number, else none (a message of a log
// record or a missing file names no page).
func pagesNamed(msg string) int64 {
	msg = strings.ToLower(msg)
	if n := strings.Count(msg, "invalid page in block"); n > 0 {
		return int64(n)
	}
	if slices.ContainsFunc(pageSigns, func(s string) bool { return strings.Contains(msg, s) }) ||
		strings.Contains(msg, "page") && strings.Contains(msg, "corrupt") {
		return 1
	}
	return 0
}

// check verifies the host's server or, on a cluster, every node, and
// compares the nodes: the cycle counts the worst node's losses, and a node
// whose data differ from node 1's breaks its consistency.
func check(ctx context.Context, host Host, before *state, a *acks, c *results.DurabilityCycle) error {
	cl, ok := host.(Cluster)
	if !ok || len(cl.Nodes()) < 2 {
		return verify(ctx, host.Engine(), before, a, c, nil)
	}
	nodes := make([]nodeCheck, len(cl.Nodes()))
	for i, e := range cl.Nodes() {
		if err := verify(ctx, e, before, a, &nodes[i].cycle, &nodes[i].fingerprint); err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
	}
	mergeNodes(c, nodes, cl.Rejoined())
	return nil
}

// nodeCheck is one node's verification after a recovery.
type nodeCheck struct {
	cycle       results.DurabilityCycle
	fingerprint []int64
}

// mergeNodes gives the cycle its nodes' figures: the worst node's losses
// and consistency, with the check that every node holds node 1's data,
// and every node's damaged pages (each node writes its own files).
func mergeNodes(c *results.DurabilityCycle, nodes []nodeCheck, rejoined []string) {
	agree := results.Check{ID: "nodes", Name: "every node holds node 1's data", OK: true}
	var apart []string
	worst := nodes[0].cycle.Consistency
	for i, nc := range nodes {
		n := results.DurabilityNode{Node: i + 1, LostAcknowledged: nc.cycle.LostAcknowledged,
			CommittedUnacknowledged: nc.cycle.CommittedUnacknowledged, ConsistencyOK: nc.cycle.Consistency.OK,
			PagesDamaged: nc.cycle.PagesDamaged, Differs: differs(nodes[0].fingerprint, nc.fingerprint)}
		if i < len(rejoined) {
			n.Rejoined = rejoined[i]
		}
		if n.Differs != "" {
			apart = append(apart, fmt.Sprintf("node %d: %s", n.Node, n.Differs))
		}
		if worst.OK && !nc.cycle.Consistency.OK {
			worst = nc.cycle.Consistency
		}
		c.LostAcknowledged = max(c.LostAcknowledged, n.LostAcknowledged)
		c.CommittedUnacknowledged = max(c.CommittedUnacknowledged, n.CommittedUnacknowledged)
		c.PagesDamaged += n.PagesDamaged
		if nc.cycle.PageCheck != "" {
			c.PageCheck = nc.cycle.PageCheck
		}
		for _, p := range nc.cycle.DamagedPages {
			if len(c.DamagedPages) < maxNamedPages {
				c.DamagedPages = append(c.DamagedPages, fmt.Sprintf("node %d: %s", n.Node, p))
			}
		}
		c.Nodes = append(c.Nodes, n)
	}
	agree.OK, agree.Violations, agree.Detail = len(apart) == 0, int64(len(apart)), strings.Join(apart, "; ")
	worst.Checks = append(worst.Checks, agree)
	worst.OK = worst.OK && agree.OK
	c.Consistency = worst
}

// differs names what fingerprint b has other than a ("" when nothing).
func differs(a, b []int64) string {
	var d []string
	for i, name := range oltp.FingerprintNames {
		if a[i] != b[i] {
			d = append(d, fmt.Sprintf("%s %d against node 1's %d", name, b[i], a[i]))
		}
	}
	return strings.Join(d, ", ")
}

// verify counts the cycle's acknowledged commits that are gone from e and
// those in flight at the cut that survived, and runs the consistency
// checks; with fp, it reads e's fingerprint too.
func verify(ctx context.Context, e engine.Engine, before *state, a *acks, c *results.DurabilityCycle, fp *[]int64) error {
	ctl, err := oltp.Connect(ctx, e)
	if err != nil {
		return err
	}
	defer ctl.Close()
	for k, start := range before.nextOID {
		ids, err := oltp.OrderIDs(ctx, ctl, k, start)
		if err != nil {
			return err
		}
		present := make(map[int]bool, len(ids))
		for _, id := range ids {
			present[id] = true
		}
		for _, id := range a.orders[k] {
			if present[id] {
				delete(present, id)
			} else {
				c.LostAcknowledged++
			}
		}
		c.CommittedUnacknowledged += int64(len(present))
	}
	after, err := oltp.Payments(ctx, ctl)
	if err != nil {
		return err
	}
	for k, n := range after {
		delta := n - before.payments[k]
		acked := a.payments[k]
		if delta > acked {
			c.CommittedUnacknowledged += delta - acked
		}
	}
	for k, acked := range a.payments {
		if delta := after[k] - before.payments[k]; delta < acked {
			c.LostAcknowledged += acked - delta
		}
	}
	if c.Consistency, err = oltp.CheckConsistency(ctx, ctl); err != nil {
		return err
	}
	if err := checkPages(ctx, ctl, c); err != nil || fp == nil {
		return err
	}
	*fp, err = oltp.Fingerprint(ctx, ctl)
	return err
}

// maxNamedPages bounds the damaged pages a cycle names.
const maxNamedPages = 20

// checkPages verifies the data files' pages after a recovery, when the
// engine's workload can.
func checkPages(ctx context.Context, ctl oltp.Control, c *results.DurabilityCycle) error {
	pc, ok := ctl.(oltp.PageChecker)
	if !ok {
		return nil
	}
	found, err := pc.CheckPages(ctx)
	if err != nil {
		return err
	}
	c.PageCheck, c.PagesDamaged = found.Method, int64(len(found.Damaged))
	c.DamagedPages = found.Damaged[:min(len(found.Damaged), maxNamedPages)]
	return nil
}
