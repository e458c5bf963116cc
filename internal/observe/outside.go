package observe

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// The CPU of processes outside calibra's tree tells a figure measured on a
// busy host from one the workload alone set. The tree is calibra and its
// descendants (the managed server, fio), plus the database server when it
// runs on this machine but was not started by calibra. Kernel threads are
// left out: they do the workload's I/O.

// pfKthread is the kernel-thread bit of /proc/PID/stat's flags.
const pfKthread = 0x00200000

// procTicks is one process's CPU: its own and its reaped children's, in
// USER_HZ ticks, the unit of /proc/stat.
type procTicks struct {
	pid, ppid int
	start     uint64 // start time, to tell a reused PID from the same process
	ticks     uint64
	kthread   bool
}

// outsideProc is a process outside the tree at one reading.
type outsideProc struct {
	pid   int
	start uint64
	ticks uint64
}

// readProcs reads every process's CPU ticks under the proc root; processes
// that exit while it reads are skipped.
func readProcs(proc string) ([]procTicks, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	out := make([]procTicks, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p, ok := parseProcStat(pid, data); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// parseProcStat reads the fields after the command name, which may itself
// hold spaces and parentheses: state ppid ... flags(9) ... utime(14)
// stime(15) cutime(16) cstime(17) ... starttime(22).
func parseProcStat(pid int, data []byte) (procTicks, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procTicks{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 { // f[0] is field 3 (state)
		return procTicks{}, false
	}
	num := func(field int) uint64 {
		v, _ := strconv.ParseUint(string(f[field-3]), 10, 64)
		return v
	}
	// cutime and cstime are signed in the kernel's format; a negative value
	// never occurs for real processes, and parses as 0 here.
	return procTicks{pid: pid, ppid: int(num(4)), start: num(22),
		ticks:   num(14) + num(15) + num(16) + num(17),
		kthread: num(9)&pfKthread != 0 || pid == 2 || num(4) == 2}, true
}

// outside returns the processes that are neither in the trees rooted at
// roots nor kernel threads, sorted by PID.
func outside(procs []procTicks, roots []int) []outsideProc {
	parent := make(map[int]int, len(procs))
	for _, p := range procs {
		parent[p.pid] = p.ppid
	}
	inTree := map[int]bool{}
	for _, r := range roots {
		inTree[r] = true
	}
	var member func(pid, depth int) bool
	member = func(pid, depth int) bool {
		if in, seen := inTree[pid]; seen {
			return in
		}
		pp, ok := parent[pid]
		in := ok && pp > 0 && depth < 64 && member(pp, depth+1)
		inTree[pid] = in
		return in
	}
	var out []outsideProc
	for _, p := range procs {
		if !p.kthread && !member(p.pid, 0) {
			out = append(out, outsideProc{pid: p.pid, start: p.start, ticks: p.ticks})
		}
	}
	return out
}

// outsideTicks is the CPU the processes outside the tree used between two
// readings: the growth of each that lived through both, and all of a new
// one's. A process that exited in between is not counted, so the figure
// errs low, never high.
func outsideTicks(a, b []outsideProc) uint64 {
	before := make(map[[2]uint64]uint64, len(a))
	for _, p := range a {
		before[[2]uint64{uint64(p.pid), p.start}] = p.ticks
	}
	var sum uint64
	for _, p := range b {
		prev, ok := before[[2]uint64{uint64(p.pid), p.start}]
		switch {
		case !ok:
			sum += p.ticks
		case p.ticks > prev:
			sum += p.ticks - prev
		}
	}
	return sum
}
