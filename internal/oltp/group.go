package oltp

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/progress"
	"github.com/calibra-bench/calibra/internal/results"
)

// dataMembers are the servers that each hold a copy of the schema: every
// instance of a group of independent instances, the first member of a
// group that shares one database, or the engine itself.
func dataMembers(e engine.Engine) []engine.Engine {
	if g, ok := e.(engine.Group); ok {
		if g.SharedData() {
			return g.Members()[:1]
		}
		return g.Members()
	}
	return []engine.Engine{e}
}

// member names a group's member k (from 0) in a sentence; empty for one.
func member(of []engine.Engine, k int) string {
	if len(of) == 1 {
		return ""
	}
	return fmt.Sprintf("instance %d of %d: ", k+1, len(of))
}

// Build builds the schema on every data member in turn (buildOne); the
// build step sums their rows, sizes and times and joins their checks.
func Build(ctx context.Context, e engine.Engine, cfg BuildConfig, prog *progress.Printer) (*results.OLTPBuild, error) {
	ms := dataMembers(e)
	var sum *results.OLTPBuild
	for k, m := range ms {
		if len(ms) > 1 {
			prog.Phase("oltp build: instance %d of %d", k+1, len(ms))
		}
		out, err := buildOne(ctx, m, cfg, prog)
		if err != nil {
			if sum == nil {
				return out, err
			}
			return sum, fmt.Errorf("%s%w", member(ms, k), err)
		}
		if sum == nil {
			sum = out
			if len(ms) > 1 {
				sum.Instances = len(ms)
			}
			continue
		}
		for t, n := range out.Rows {
			sum.Rows[t] += n
		}
		sum.DBBytes += out.DBBytes
		sum.LoadS += out.LoadS
		sum.IndexS += out.IndexS
		sum.VacuumS += out.VacuumS
		sum.TotalS += out.TotalS
		sum.Consistency = joinConsistency(sum.Consistency, out.Consistency)
		sum.TemplateKept = cmp.Or(sum.TemplateKept, out.TemplateKept)
	}
	if sum.TotalS > 0 {
		sum.MBPerS = float64(sum.DBBytes) / 1e6 / sum.TotalS
	}
	return sum, nil
}

// joinConsistency adds b's violations to a's, check by check: the data
// are consistent only where every instance's are.
func joinConsistency(a, b *results.Consistency) *results.Consistency {
	if a == nil || b == nil {
		return nil
	}
	out := &results.Consistency{OK: a.OK && b.OK, Checks: append([]results.Check(nil), a.Checks...)}
	for i := range out.Checks {
		if i < len(b.Checks) {
			c := &out.Checks[i]
			c.Violations += b.Checks[i].Violations
			c.OK = c.OK && b.Checks[i].OK
			if c.Violations > 0 {
				c.Detail = fmt.Sprintf("%d warehouses or districts violate it, over every instance", c.Violations)
			}
		}
	}
	return out
}

// Check connects to every data member and runs the consistency conditions.
func Check(ctx context.Context, e engine.Engine) (*results.Consistency, error) {
	var sum *results.Consistency
	ms := dataMembers(e)
	for k, m := range ms {
		ctl, err := Connect(ctx, m)
		if err != nil {
			return nil, fmt.Errorf("%s%w", member(ms, k), err)
		}
		c, err := CheckConsistency(ctx, ctl)
		ctl.Close()
		if err != nil {
			return nil, fmt.Errorf("%s%w", member(ms, k), err)
		}
		if sum == nil {
			sum = c
		} else {
			sum = joinConsistency(sum, c)
		}
	}
	return sum, nil
}

// Built returns the build record every data member holds, or nil when
// one of them holds no complete build; members built with different
// warehouse counts are an input error.
func Built(ctx context.Context, e engine.Engine) (*BuildInfo, error) {
	var first *BuildInfo
	ms := dataMembers(e)
	for k, m := range ms {
		ctl, err := Connect(ctx, m)
		if err != nil {
			return nil, err
		}
		bi, err := ReadBuildInfo(ctx, ctl)
		ctl.Close()
		if err != nil || bi == nil {
			return nil, err
		}
		if first == nil {
			first = bi
		} else if bi.Warehouses != first.Warehouses {
			return nil, fault.Input(fmt.Sprintf("rebuild them alike with 'calibra oltp build --rebuild --instances %d --warehouses %d'", len(ms), first.Warehouses),
				"%sholds %d warehouses, instance 1 holds %d", member(ms, k), bi.Warehouses, first.Warehouses)
		}
	}
	return first, nil
}

// members is what a run drives: each server's dialect and control
// session, one of each for a single server.
type members struct {
	ds     []Dialect
	ctls   []Control
	shared bool // one database on every member (engine.Group.SharedData)
}

func openMembers(ctx context.Context, e engine.Engine) (*members, error) {
	ms := engine.MembersOf(e)
	g, isGroup := e.(engine.Group)
	tg := &members{shared: isGroup && g.SharedData()}
	for k, m := range ms {
		d, err := Dialects.For(m)
		if err != nil {
			tg.close()
			return nil, err
		}
		ctl, err := d.Connect(ctx)
		if err != nil {
			tg.close()
			return nil, fmt.Errorf("%s%w", member(ms, k), err)
		}
		tg.ds, tg.ctls = append(tg.ds, d), append(tg.ctls, ctl)
	}
	return tg, nil
}

// memberAt is a session's member of a group: k of n (from 1), a node of
// one shared database or an instance of its own; zero for one server.
type memberAt struct {
	k, n int
	node bool
}

// at is the member session i is on: openSessions deals session i to
// member i mod n.
func (tg *members) at(i int) memberAt {
	if len(tg.ds) < 2 {
		return memberAt{}
	}
	return memberAt{k: i%len(tg.ds) + 1, n: len(tg.ds), node: tg.shared}
}

// serverLog is the log a dialect's fault points at; a group's member k
// writes its own, engine.MemberLog of it.
const serverLog = "logs/server.log"

// fault names the member a session's fault came from and its own log,
// where the dialect could say only "the server" and logs/server.log,
// which a group does not write.
func (m memberAt) fault(f error) error {
	if m.n == 0 {
		return f
	}
	word := "instance"
	if m.node {
		word = "node"
	}
	msg := strings.ReplaceAll(f.Error(), serverLog, engine.MemberLog(serverLog, m.k))
	return fmt.Errorf("%s %d of %d: %s", word, m.k, m.n, msg)
}

func (tg *members) close() {
	for _, c := range tg.ctls {
		c.Close()
	}
}

// homeIndex is the index that places user g (of the whole run) in the
// warehouses of the server it runs on, g mod len(ds): independent
// instances each hold every warehouse, so a server's users take its
// warehouses in turn; a shared database's users spread over them all.
func (tg *members) homeIndex(g int) int {
	if tg.shared {
		return g
	}
	return g / len(tg.ds)
}

// counters reads every member's counters, one after the other.
func (tg *members) counters(ctx context.Context, flush bool) ([]Counters, error) {
	cs := make([]Counters, len(tg.ctls))
	for k, ctl := range tg.ctls {
		c, err := ctl.Counters(ctx, flush)
		if err != nil {
			if len(tg.ctls) > 1 {
				err = fmt.Errorf("server %d of %d: %w", k+1, len(tg.ctls), err)
			}
			return nil, err
		}
		cs[k] = c
	}
	return cs, nil
}

// sum is the run's counters: every member's transactions and checkpoints;
// orders are every instance's, or a shared database's once (its first
// member's, which holds the same rows as the others).
func (tg *members) sum(cs []Counters) Counters {
	var s Counters
	for k, c := range cs {
		if k == 0 || !tg.shared {
			s.SumNextOID += c.SumNextOID
		}
		s.Xacts += c.Xacts
		s.Checkpoints += c.Checkpoints
		s.NoCheckpoints = cmp.Or(s.NoCheckpoints, c.NoCheckpoints)
		s.CountsAutovacuum = s.CountsAutovacuum || c.CountsAutovacuum
		s.Autovacuum += c.Autovacuum
		s.AutovacuumBusy += c.AutovacuumBusy
	}
	return s
}

// figures are each member's database-measured rates over the window: NOPM
// for an independent instance (a shared database's orders are counted
// once, for the run), tpm_db for every member, less calibra's own
// transactions on it (its start read and, with userFlush, each of its
// users' flush at the end edge) and autovacuum's as far as they are known.
func (tg *members) figures(c0s, c1s []Counters, perRead int64, userFlush bool, users int, win time.Duration) []results.OLTPInstance {
	if len(tg.ds) == 1 {
		return nil
	}
	out := make([]results.OLTPInstance, len(tg.ds))
	for k := range out {
		out[k].Instance = k + 1
		if !tg.shared {
			n := nopm(c0s[k], c1s[k], win)
			out[k].NOPM = &n
		}
		own := perRead
		if userFlush {
			own += int64((users - k + len(out) - 1) / len(out)) // users i with i mod members = k
		}
		av, _ := AutovacuumXacts(c0s[k], c1s[k])
		tpm := tpmDB(c0s[k], c1s[k], own+av, win)
		out[k].TPMDB = &tpm
	}
	return out
}

// clientFigures adds to each member's figures its users' count,
// transactions per minute and mean latency, from the recorders of its
// sessions (session i runs on member i mod the members).
func (tg *members) clientFigures(ms []results.OLTPInstance, recs []*recorder, win time.Duration) {
	if len(ms) == 0 {
		return
	}
	n := make([]int64, len(ms))
	sumNs := make([]int64, len(ms))
	for i, r := range recs {
		k := i % len(ms)
		ms[k].Users++
		for _, t := range r.win.types {
			n[k] += t.count
			sumNs[k] += t.sumNs
		}
	}
	for k := range ms {
		ms[k].TPMClient = perMinute(float64(n[k]), win)
		if n[k] > 0 {
			ms[k].ARTMs = results.Round(float64(sumNs[k])/float64(n[k])/1e6, 3)
		}
	}
}
