package observe

import (
	"context"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
)

func TestParseProcStatReadsPastACommandWithParentheses(t *testing.T) {
	// A command name may hold spaces and ')' (here "a) b"); the fields
	// count from the last ')'.
	line := "4242 (a) b) S 17 4242 4242 0 -1 4194560 120 0 0 0 250 50 7 3 20 0 1 0 98765 1000 10 18446744073709551615\n"
	p, ok := parseProcStat(4242, []byte(line))
	if !ok {
		t.Fatal("not parsed")
	}
	if p.ppid != 17 || p.ticks != 250+50+7+3 || p.kthread {
		t.Fatalf("got %+v, want ppid 17, ticks 310, not a kernel thread", p)
	}
	kworker := "99 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0 0 0 40 900 0 0 20 0 1 0 12 0 0 18446744073709551615\n"
	if k, _ := parseProcStat(99, []byte(kworker)); !k.kthread {
		t.Fatal("a kernel thread was taken for a process")
	}
}

func TestOutsideTicksLeaveTheWorkloadAndKernelThreadsOut(t *testing.T) {
	roots := []int{100, 200} // calibra, and a local server reached by DSN
	before := []procTicks{
		{pid: 1, ppid: 0, ticks: 10},                  // init: another load
		{pid: 2, ppid: 0, ticks: 5, kthread: true},    // kthreadd
		{pid: 50, ppid: 2, ticks: 500, kthread: true}, // a kworker
		{pid: 100, ppid: 1, ticks: 1000},              // calibra
		{pid: 101, ppid: 100, ticks: 300},             // its postgres
		{pid: 102, ppid: 101, ticks: 200},             // a backend
		{pid: 200, ppid: 1, ticks: 40},
		{pid: 201, ppid: 200, ticks: 60},
		{pid: 300, ppid: 1, ticks: 70},    // a shell
		{pid: 301, ppid: 300, ticks: 900}, // its long compile
	}
	if got := outsideTicks(before, roots); got != 10+70+900 {
		t.Fatalf("outside ticks %d, want 980", got)
	}
	// In the window: the compile grew by 50 and exited, its shell reaped
	// it (its cutime took the compile's 950), a new process ran 8, the
	// workload and the kernel worked hard.
	after := []procTicks{
		{pid: 1, ppid: 0, ticks: 10}, {pid: 2, ppid: 0, ticks: 5, kthread: true}, {pid: 50, ppid: 2, ticks: 900, kthread: true},
		{pid: 100, ppid: 1, ticks: 5000}, {pid: 101, ppid: 100, ticks: 900}, {pid: 102, ppid: 101, ticks: 800},
		{pid: 200, ppid: 1, ticks: 400}, {pid: 201, ppid: 200, ticks: 600},
		{pid: 300, ppid: 1, ticks: 70 + 950}, {pid: 400, ppid: 1, ticks: 8},
	}
	if got := outsideTicks(after, roots) - outsideTicks(before, roots); got != 50+8 {
		t.Fatalf("the other loads used %d ticks in the window, want 58 (the reaped compile counted once)", got)
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

// WAL on the data's own device is said, not counted twice, in neutral
// words when no engine is sampled (an engine's name its log its own way).
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
	if o.WALDisk != nil || !strings.Contains(o.Missing["wal_disk"], "the log is on the data's device") {
		t.Fatalf("wal_disk %+v, missing %q", o.WALDisk, o.Missing["wal_disk"])
	}
}

// nobody is an engine without an observer dialect.
type nobody struct{ engine.Engine }

func (nobody) Name() string { return "nobody" }

// An engine without an observer costs the run its database figures only,
// each window saying why.
func TestAnEngineWithoutObserverLosesOnlyItsFigures(t *testing.T) {
	s, err := Start(context.Background(), Config{Engine: nobody{}, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	o := s.Window(s.Edge(), s.Edge())
	if o.DB != nil || o.Missing["db"] != "the database observer is not supported by nobody" {
		t.Fatalf("db %+v, missing %q", o.DB, o.Missing["db"])
	}
}
