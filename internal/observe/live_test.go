package observe

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseProcStatReadsPastACommandWithParentheses(t *testing.T) {
	// A command name may hold spaces and ')' (here "a) b"); the fields
	// count from the last ')'.
	line := "4242 (a) b) S 17 4242 4242 0 -1 4194560 120 0 0 0 250 50 7 3 20 0 1 0 98765 1000 10 18446744073709551615\n"
	p, ok := parseProcStat(4242, []byte(line))
	if !ok {
		t.Fatal("not parsed")
	}
	if p.ppid != 17 || p.ticks != 250+50+7+3 || p.start != 98765 || p.kthread {
		t.Fatalf("got %+v, want ppid 17, ticks 310, start 98765, not a kernel thread", p)
	}
	kworker := "99 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0 0 0 40 900 0 0 20 0 1 0 12 0 0 18446744073709551615\n"
	if k, _ := parseProcStat(99, []byte(kworker)); !k.kthread {
		t.Fatal("a kernel thread was taken for a process")
	}
}

func TestOutsideLeavesTheWorkloadTreesAndKernelThreadsOut(t *testing.T) {
	procs := []procTicks{
		{pid: 1, ppid: 0, ticks: 10},               // init: another load
		{pid: 2, ppid: 0, ticks: 5, kthread: true}, // kthreadd
		{pid: 50, ppid: 2, ticks: 500, kthread: true},
		{pid: 100, ppid: 1, ticks: 1000},  // calibra
		{pid: 101, ppid: 100, ticks: 300}, // its postgres
		{pid: 102, ppid: 101, ticks: 200}, // a backend
		{pid: 200, ppid: 1, ticks: 40},    // a local server reached by DSN
		{pid: 201, ppid: 200, ticks: 60},
		{pid: 300, ppid: 1, ticks: 70}, // a stranger
	}
	got := outside(procs, []int{100, 200})
	var pids []int
	for _, p := range got {
		pids = append(pids, p.pid)
	}
	if len(pids) != 2 || pids[0] != 1 || pids[1] != 300 {
		t.Fatalf("outside = %v, want [1 300]", pids)
	}
}

func TestOutsideTicksCountsGrowthAndNewcomersButNotAReusedPID(t *testing.T) {
	a := []outsideProc{{pid: 1, start: 5, ticks: 100}, {pid: 7, start: 50, ticks: 30}, {pid: 9, start: 60, ticks: 10}}
	// 1 grew by 20; 7 is a new process that reused the PID (started at 80):
	// all of its 12 count; 9 exited; 11 is new with 8.
	b := []outsideProc{{pid: 1, start: 5, ticks: 120}, {pid: 7, start: 80, ticks: 12}, {pid: 11, start: 90, ticks: 8}}
	if got := outsideTicks(a, b); got != 20+12+8 {
		t.Fatalf("outside ticks = %d, want 40", got)
	}
}

// A load outside the workload's trees shows as CPU outside: here the test
// process burns a CPU while the workload is a sleeping child.
func TestASamplerSeesAnotherLoadOnTheHost(t *testing.T) {
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	s, err := Start(context.Background(), Config{Roots: []int{sleeper.Process.Pid}, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	from := s.Edge()
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
	}
	o := s.Window(from, s.Edge())
	if o.CPUOutsidePct == nil {
		t.Fatalf("no cpu_outside_pct: %v", o.Missing)
	}
	// One CPU of the machine's, busy all the window, less what a shared
	// machine takes from it.
	if want := 100 / float64(runtime.NumCPU()) / 2; *o.CPUOutsidePct < want {
		t.Fatalf("cpu_outside_pct = %.1f with one CPU spinning outside the workload, want ≥ %.1f", *o.CPUOutsidePct, want)
	}
}

// WAL on the data's own device is said, not counted twice.
func TestWALOnTheDataDeviceIsSaid(t *testing.T) {
	data, wal := t.TempDir(), t.TempDir()
	s, err := Start(context.Background(), Config{Path: data, WALPath: wal, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	o := s.Window(s.Edge(), s.Edge())
	if len(o.Devices) == 0 {
		t.Skipf("no block device under %s: %v", data, o.Missing["disk"])
	}
	if o.WALDisk != nil || !strings.Contains(o.Missing["wal_disk"], "the WAL is on the data's device") {
		t.Fatalf("wal_disk %+v, missing %q", o.WALDisk, o.Missing["wal_disk"])
	}
}
