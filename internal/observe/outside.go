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
	ticks     uint64
	kthread   bool
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
// stime(15) cutime(16) cstime(17).
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
	return procTicks{pid: pid, ppid: int(num(4)),
		ticks:   num(14) + num(15) + num(16) + num(17),
		kthread: num(9)&pfKthread != 0 || pid == 2 || num(4) == 2}, true
}

// outsideTicks is the CPU of the processes that are neither in the trees
// rooted at roots nor kernel threads: their own and their reaped
// children's. Between two readings its growth is the other loads' CPU: a
// child reaped inside the window moves its whole CPU into its parent's,
// and the sum over all of them counts it once (it was in the first
// reading's sum already). A process that runs and exits inside the window
// counts when its parent reaps it.
func outsideTicks(procs []procTicks, roots []int) uint64 {
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
	var sum uint64
	for _, p := range procs {
		if !p.kthread && !member(p.pid, 0) {
			sum += p.ticks
		}
	}
	return sum
}

// ParentOf is the parent of process pid, read under the procfs root proc,
// when the process runs command (as /proc/PID/stat names it, e.g.
// "postgres"): a dialect finds its local server from its own session's
// process this way.
func ParentOf(proc string, pid int, command string) (int, bool) {
	data, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil || !bytes.Contains(data, []byte("("+command+")")) {
		return 0, false
	}
	t, ok := parseProcStat(pid, data)
	return t.ppid, ok && t.ppid > 1
}
