package observe

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

// The standbys of a managed instance (engine.Replicator): their lag, from
// the primary's view of them that the dialect reads with the other
// counters (DBCounters.Replicas), and their I/O, from their processes
// and, when their data have a device of their own, from that device.

// ReplicaStat is one standby as the primary sees it at one reading.
type ReplicaStat struct {
	State, SyncState                    string
	WriteLagMs, FlushLagMs, ReplayLagMs *float64 // nil while caught up and idle
	ReplayLagBytes                      *int64
}

// replicaWatch is what the sampler knows of one standby from its start.
type replicaWatch struct {
	name   string
	device string // its own device; empty when it shares the primary's
}

// replicaIO is one standby's I/O counters at one reading.
type replicaIO struct {
	pid                  int
	readB, wchar, writeN int64
	procErr              error
	disk                 *diskCounters
	diskErr              error
}

// watchReplicas resolves each standby's device once: a device apart from
// the primary's data and WAL devices has counters of its own.
func (s *Sampler) watchReplicas(rep engine.Replicator) {
	s.replicator = rep
	for _, r := range rep.Replicas() {
		w := replicaWatch{name: r.Name}
		if dev, err := blockDevice(s.cfg.Proc, s.cfg.Sys, absPath(r.DataDir)); err == nil &&
			!slices.Contains(s.devices, dev) && !slices.Contains(s.walDevices, dev) {
			w.device = dev
		}
		s.replicas = append(s.replicas, w)
	}
}

// readReplicas reads each standby's I/O now; procs is the process table
// of the same reading.
func (s *Sampler) readReplicas(procs []procTicks) []replicaIO {
	if s.replicator == nil {
		return nil
	}
	now := s.replicator.Replicas()
	out := make([]replicaIO, len(s.replicas))
	for k, w := range s.replicas {
		io := &out[k]
		if w.device != "" {
			io.disk, io.diskErr = readDisks(filepath.Join(s.cfg.Proc, "diskstats"), []string{w.device})
		}
		if k >= len(now) || now[k].PID <= 0 {
			io.procErr = fmt.Errorf("the standby was not running")
			continue
		}
		io.pid = now[k].PID
		io.readB, io.wchar, io.writeN, io.procErr = treeIO(s.cfg.Proc, io.pid, procs)
	}
	return out
}

// treeIO sums a server's main process's and its children's
// /proc/PID/io: read_bytes (what they fetched from storage), wchar and
// syscw (the bytes and calls of their writes). A child reaped by the
// server has its I/O added to the server's, so each byte counts once.
// write_bytes is not used: it counts a page each time it is dirtied, and
// a page rewritten after every fsync (a standby's WAL) counts again each
// time, a whole large folio at a time on recent kernels (950 MB counted
// here for 110 MB written).
func treeIO(proc string, pid int, procs []procTicks) (readB, wchar, writes int64, err error) {
	pids := []int{pid}
	for _, p := range procs {
		if p.ppid == pid {
			pids = append(pids, p.pid)
		}
	}
	for i, p := range pids {
		v, perr := readProcIO(filepath.Join(proc, strconv.Itoa(p), "io"))
		if perr != nil {
			if i == 0 {
				return 0, 0, 0, perr
			}
			continue // a child that exited meanwhile: its parent has its I/O
		}
		readB += v["read_bytes"]
		wchar += v["wchar"]
		writes += v["syscw"]
	}
	return readB, wchar, writes, nil
}

func readProcIO(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the standby's I/O: %w", err)
	}
	defer f.Close()
	v := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, val, ok := strings.Cut(sc.Text(), ":")
		if n, perr := strconv.ParseInt(strings.TrimSpace(val), 10, 64); ok && perr == nil {
			v[k] = n
		}
	}
	for _, k := range []string{"read_bytes", "wchar", "syscw"} {
		if _, ok := v[k]; !ok {
			return nil, fmt.Errorf("%s has no %s (a kernel without task I/O accounting)", path, k)
		}
	}
	return v, sc.Err()
}

// replicasBetween is each standby over the readings rs (the window's
// edges first and last): lag figures from every reading, I/O from the
// edges. Reasons for what is absent go in missing, keyed replicas[K].
func (s *Sampler) replicasBetween(rs []reading, missing map[string]string) []results.ObserveReplica {
	if len(s.replicas) == 0 || len(rs) == 0 {
		return nil
	}
	a, b := rs[0], rs[len(rs)-1]
	dt := b.at.Sub(a.at).Seconds()
	out := make([]results.ObserveReplica, len(s.replicas))
	for k, w := range s.replicas {
		key := fmt.Sprintf("replicas[%d]", k)
		o := &out[k]
		o.Name = w.name
		lags := sampleStates(o, rs)
		switch {
		case s.db == nil:
			missing[key+".lag"] = "the database's counters are not read: " + s.static["db"]
		case o.Samples == 0:
			missing[key+".lag"] = "no reading of " + s.words().StandbyLag + " succeeded in the window"
		default:
			o.WriteLagMs, o.FlushLagMs, o.ReplayLagMs = spread(lags[0]), spread(lags[1]), spread(lags[2])
			o.ReplayLagBytes = spread(lags[3])
			if o.ReplayLagMs == nil {
				missing[key+".replay_lag_ms"] = "the standby reported no lag time in the window (caught up and idle, or not connected)"
			}
		}
		if k >= len(a.replicas) || k >= len(b.replicas) {
			missing[key+".io"] = "the standby's I/O was not read at the window's edges"
			continue
		}
		x, y := a.replicas[k], b.replicas[k]
		switch {
		case x.procErr != nil || y.procErr != nil:
			missing[key+".io"] = errors2(x.procErr, y.procErr)
		case x.pid != y.pid:
			missing[key+".io"] = "the standby restarted in the window"
		case y.readB < x.readB || y.wchar < x.wchar || y.writeN < x.writeN:
			missing[key+".io"] = "the standby's I/O counters went backwards in the window"
		case dt > 0:
			o.ReadBytes, o.WriteCallBytes, o.WriteCalls = ptr(y.readB-x.readB), ptr(y.wchar-x.wchar), ptr(y.writeN-x.writeN)
			o.ReadMBps = ptr(round3(float64(*o.ReadBytes) / dt / 1e6))
			o.WriteMBps = ptr(round3(float64(*o.WriteCallBytes) / dt / 1e6))
		}
		if w.device == "" {
			missing[key+".disk"] = "the standby's data share the primary's device: disk holds both, and read_bytes and write_call_bytes are the standby's own"
			continue
		}
		o.Devices = []string{w.device}
		if x.disk == nil || y.disk == nil || dt <= 0 {
			missing[key+".disk"] = "the standby's device counters could not be read: " + errors2(x.diskErr, y.diskErr)
			continue
		}
		dm := map[string]string{}
		if o.Disk = diskRates(*x.disk, *y.disk, dt, dm); o.Disk == nil {
			missing[key+".disk"] = dm["disk"]
		}
	}
	return out
}

// sampleStates counts the states the standby o was seen in over the
// readings rs, the last its state at the end, and returns its lags in
// them: write, flush and replay ms, and replay bytes.
func sampleStates(o *results.ObserveReplica, rs []reading) [4][]float64 {
	var lags [4][]float64
	for _, r := range rs {
		if r.db == nil || r.db.err != nil {
			continue
		}
		o.Samples++
		if o.States == nil {
			o.States = map[string]int{}
		}
		st, ok := r.db.Replicas[o.Name]
		if !ok {
			o.States["absent"]++
			o.State, o.SyncState = "absent", ""
			continue
		}
		o.States[st.State+"/"+st.SyncState]++
		o.State, o.SyncState = st.State, st.SyncState
		for i, v := range []*float64{st.WriteLagMs, st.FlushLagMs, st.ReplayLagMs} {
			if v != nil {
				lags[i] = append(lags[i], *v)
			}
		}
		if st.ReplayLagBytes != nil {
			lags[3] = append(lags[3], float64(*st.ReplayLagBytes))
		}
	}
	return lags
}

// spread is the mean and maximum of v (3 decimals); nil when empty.
func spread(v []float64) *results.Spread {
	if len(v) == 0 {
		return nil
	}
	sum, top := 0.0, v[0]
	for _, x := range v {
		sum += x
		top = max(top, x)
	}
	return &results.Spread{Mean: round3(sum / float64(len(v))), Max: round3(top)}
}

// errors2 is the first non-nil error's text.
func errors2(a, b error) string {
	for _, e := range []error{a, b} {
		if e != nil {
			return e.Error()
		}
	}
	return "unknown"
}
