package verdict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/results"
	"github.com/calibra-bench/calibra/internal/terms"
)

func f(v float64) *float64 { return &v }
func i(v int64) *int64     { return &v }

// waits are a window's database waits: one event of share, the rest CPU.
func waits(class, event string, share float64) []results.Wait {
	return []results.Wait{{Class: "CPU", Event: "CPU", SharePct: 100 - share}, {Class: class, Event: event, SharePct: share}}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name   string
		o      *results.Observe
		driver *float64
		engine string // whose waits o's are
		want   string
		rule   string // fragment of the evidence's rule
	}{
		{"no observations", nil, nil, "", Unknown, "no observations"},
		// The quick study's iocal on this 2-core machine: 94.6% CPU busy,
		// reads reaching the device, the device far from busy.
		{"cpu-saturated iocal with reads on the device is not storage",
			&results.Observe{WindowS: 10, CPUBusyPct: f(94.6), Disk: &results.ObserveDisk{RIOPS: f(23802), UtilPct: f(61), AwaitMs: f(0.2)},
				DB: &results.ObserveDB{BlksRead: i(284450), HitPct: f(40)}, Waits: waits("IO", "DataFileRead", 35)},
			nil, postgres.Name, CPU, "CPUs were busy 95%"},
		{"a busy device is storage, even with busy CPUs",
			&results.Observe{CPUBusyPct: f(95), Disk: &results.ObserveDisk{UtilPct: f(99), AwaitMs: f(8)}}, nil, "", Storage, "device was busy 99%"},
		// The device step: fio alone used 14% of the machine, but
		// the CPUs were 82% busy.
		{"another load on the host", &results.Observe{CPUBusyPct: f(81.7), CPUOutsidePct: f(66),
			Disk: &results.ObserveDisk{UtilPct: f(85)}}, nil, "", Host, "outside calibra and the database used 66%"},
		{"a little background is not another load", &results.Observe{CPUBusyPct: f(30), CPUOutsidePct: f(4),
			Disk: &results.ObserveDisk{UtilPct: f(92)}}, nil, "", Storage, "device was busy 92%"},
		{"the driver's own CPU", &results.Observe{CPUBusyPct: f(97)}, f(30), "", Driver, "calibra itself used 30%"},
		{"commit flushes", &results.Observe{CPUBusyPct: f(50), DB: &results.ObserveDB{HitPct: f(99.5)},
			Waits: waits("IO", "WALSync", 45)}, f(5), postgres.Name, WAL, "log writes and syncs took 45%"},
		{"commit flushes, as PostgreSQL 17+ names them", &results.Observe{CPUBusyPct: f(50), Waits: waits("IO", "WalSync", 40)}, nil, postgres.Name, WAL, "log writes and syncs took 40%"},
		{"row locks", &results.Observe{CPUBusyPct: f(40), Waits: waits("Lock", "tuple", 60)}, nil, postgres.Name, Lock, "Lock waits took 60%"},
		{"MariaDB's row locks and latches together", &results.Observe{CPUBusyPct: f(40), Waits: []results.Wait{
			{Class: "CPU", Event: "CPU", SharePct: 50}, {Class: "lock/row", Event: "innodb/row_lock", SharePct: 20},
			{Class: "synch/mutex", Event: "innodb/lock_mutex", SharePct: 15}, {Class: "io/file", Event: "innodb/innodb_data_file", SharePct: 15}}},
			nil, mariadb.Name, Lock, "Lock waits took 35%"},
		{"MariaDB's redo log writes", &results.Observe{CPUBusyPct: f(40), Waits: waits("io/file", "innodb/innodb_log_file", 40)}, nil, mariadb.Name, WAL, "log writes and syncs took 40%"},
		// The quick study's oltp: 99.3% hits, CPU not saturated.
		{"served from memory", &results.Observe{CPUBusyPct: f(70), DB: &results.ObserveDB{HitPct: f(99.3)},
			Waits: waits("IO", "DataFileRead", 5)}, f(8), postgres.Name, Cache, "99.3% of the blocks"},
		{"nothing stands out", &results.Observe{CPUBusyPct: f(30), Disk: &results.ObserveDisk{UtilPct: f(20)},
			DB: &results.ObserveDB{HitPct: f(80)}}, nil, "", Unknown, "neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := DecideWith(c.o, c.driver, Options{Waits: terms.Of(c.engine).WaitKind})
			if got != c.want || ev == nil || !strings.Contains(ev.Rule, c.rule) {
				t.Errorf("limited by %s (%+v), want %s with %q", got, ev, c.want, c.rule)
			}
		})
	}
}

// The rules on a recorded quick study (2 cores, PostgreSQL 15): each step
// re-decided from its whole window, and the verdict the step took from
// its headline point.
func TestDecideOnARecordedQuickStudy(t *testing.T) {
	run, err := results.Load("testdata/quick")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, st := range run.Steps {
		var driver *float64
		if o, ok := st.Body.(*results.OLTP); ok && o.Driver != nil {
			driver = &o.Driver.MachineSharePct
		}
		by, ev := DecideWith(st.Observe, driver, Options{Nearest: true, Log: "WAL", Waits: terms.Of(postgres.Name).WaitKind}) // a PostgreSQL run
		fmt.Fprintf(&b, "%s %q window: %s: %s\n", st.Kind, st.Name, by, ev.Rule)
		if h, ok := st.Body.(results.HeadlineLimiter); ok {
			if by, ev, ok := h.HeadlineLimit(); ok {
				fmt.Fprintf(&b, "%s %q headline: %s: %s\n", st.Kind, st.Name, by, ev.Rule)
			}
		}
	}
	golden.Check(t, "testdata/quick.verdicts", []byte(b.String()))
}

// TestDecideWithTheDeviceAndTheFlush: the rules that read the run's device
// step and a commit's flush path, and the edges around them.
func TestDecideWithTheDeviceAndTheFlush(t *testing.T) {
	pg, my := terms.Of(postgres.Name).WaitKind, terms.Of(mariadb.Name).WaitKind
	load := func(pct float64) *Load {
		return &Load{Pct: pct, What: fmt.Sprintf("23802 reads/s reached the device: %.0f%% of the 8k-randread it did at 16 outstanding", pct)}
	}
	disk := func(util float64) *results.ObserveDisk { return &results.ObserveDisk{UtilPct: f(util)} }
	cases := []struct {
		name string
		o    *results.Observe
		opts Options
		want string
		rule []string // fragments of the evidence's rule
	}{
		{"reads near the device's capability are storage, its busy time ambiguous",
			&results.Observe{CPUBusyPct: f(70), Disk: disk(60)}, Options{Nearest: true, Load: load(94)},
			Storage, []string{"94% of the 8k-randread", "≥ 90%"}},
		{"near the device's capability with another load: storage, the load a caveat",
			&results.Observe{CPUBusyPct: f(90), CPUOutsidePct: f(30), Disk: disk(70)}, Options{Load: load(92)},
			Storage, []string{"92% of", "caveat", "used 30% of the machine"}},
		// The lab's hdd ramp: the disk saturated, another load on the host.
		{"a device busy 97% is storage even with another load on the host",
			&results.Observe{CPUBusyPct: f(60), CPUOutsidePct: f(35), Disk: disk(97)}, Options{},
			Storage, []string{"busy 97%", "≥ 95%", "caveat"}},
		{"busy 85% with another load: the host's, as the device is not saturated",
			&results.Observe{CPUBusyPct: f(60), CPUOutsidePct: f(35), Disk: disk(85)}, Options{},
			Host, []string{"used 35% of the machine"}},
		{"busy but far below the device's capability: the nearest other resource",
			&results.Observe{CPUBusyPct: f(75), Disk: disk(88)}, Options{Nearest: true, Load: load(30)},
			CPU, []string{"the nearest: the CPUs were busy 75.0%", "busy 88%", "did 30% of what it did"}},
		{"busy and far below, nothing else near: unknown, saying why not storage",
			&results.Observe{CPUBusyPct: f(30), Disk: disk(99)}, Options{Nearest: true, Load: load(20)},
			Unknown, []string{"neither", "busy 99%", "not saturation"}},
		{"a window's lower bound of the load never clears a busy device",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(96)}, Options{Nearest: true, Load: &Load{Pct: 20, What: "20% of the reads", Floor: true}},
			Storage, []string{"busy 96%"}},
		{"a window's lower bound of the load at 92%: storage",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(60)}, Options{Load: &Load{Pct: 92, What: "92% of the writes", Floor: true}},
			Storage, []string{"92% of the writes"}},
		// A sequential read's readahead: 4 MB reads against fio's 1 MiB.
		{"far above the device point, the load decides nothing: busy time does",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(70)}, Options{Nearest: true, Load: load(208)},
			Storage, []string{"the nearest: the device was busy 70.0%"}},
		{"far above the device point and busy: storage by its busy time",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(99)}, Options{Load: load(166)},
			Storage, []string{"device was busy 99%"}},
		{"half the device's capability: its busy time still counts",
			&results.Observe{CPUBusyPct: f(50), Disk: disk(85)}, Options{Load: load(60)},
			Storage, []string{"busy 85%"}},
		{"the nearest named by the device load rather than its busy time",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(75)}, Options{Nearest: true, Load: load(80)},
			Storage, []string{"the nearest: 23802 reads/s", "80% of the 8k-randread", "89% of the way"}},
		{"a server-side read near the device is storage, whatever calibra's CPU",
			&results.Observe{CPUBusyPct: f(95), Disk: disk(70)}, Options{ServerSide: true, Load: load(91)},
			Storage, []string{"91% of"}},
		// The quick study's random reads at 4 jobs on an idle host
		// (2026-11-26): 74% busy, 41% of the device's qd-16 point, the
		// backends waiting on reads 98% of their time.
		{"reads waiting on the device most of the time: its latency, more to give at more I/Os",
			&results.Observe{CPUBusyPct: f(37), Disk: disk(74), Waits: waits("IO", "DataFileRead", 98)},
			Options{Nearest: true, ServerSide: true, Load: load(41), Waits: pg},
			Storage, []string{"data-file I/O took 98%", "latency set the pace", "did 41% of its nearest measured point"}},
		{"MariaDB's data-file waits count as data-file I/O",
			&results.Observe{CPUBusyPct: f(37), Disk: disk(50), Waits: waits("io/file", "wait/io/file/innodb/innodb_data_file", 60)},
			Options{Nearest: true, Waits: my}, Storage, []string{"data-file I/O took 60%"}},
		{"data-file waits under the threshold: the nearest, named as such",
			&results.Observe{CPUBusyPct: f(20), Disk: disk(30), Waits: waits("IO", "DataFileRead", 25)},
			Options{Nearest: true, Waits: pg}, Storage, []string{"the nearest: data-file I/O took 25.0%"}},
		// MariaDB's wal point seen on 2026-11-26: 36% CPU, 30% device busy,
		// every block a cache hit; its log in its own words.
		{"a commit point is never cache: its flush path, else the nearest",
			&results.Observe{CPUBusyPct: f(36), Disk: disk(30), DB: &results.ObserveDB{HitPct: f(100)}},
			Options{Nearest: true, Flush: &Flush{FlushMs: 0.05, CommitMs: 0.164, Source: "the device's write await"}, Log: "redo log"},
			Storage, []string{"the nearest: the redo log flush took 30.5% of a commit's time"}},
		{"a commit point at one committer, its flush most of each commit",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(60)},
			Options{Flush: &Flush{FlushMs: 0.080, CommitMs: 0.090, Source: "the server's mean WAL sync"}, Log: "WAL"},
			Storage, []string{"the WAL flush took 89% of a commit's time", "0.080 ms of 0.090 ms"}},
		{"a commit point on saturated CPUs",
			&results.Observe{CPUBusyPct: f(96), Disk: disk(40)},
			Options{Flush: &Flush{FlushMs: 0.1, CommitMs: 0.5, Source: "the server's mean WAL sync"}},
			CPU, []string{"CPUs were busy 96%"}},
		{"a commit point where nothing came near",
			&results.Observe{CPUBusyPct: f(20), Disk: disk(10), DB: &results.ObserveDB{HitPct: f(100)}},
			Options{Nearest: true, Flush: &Flush{FlushMs: 0.01, CommitMs: 0.2, Source: "the server's mean WAL sync"}},
			Unknown, []string{"neither"}},
		{"a write point is never cache",
			&results.Observe{CPUBusyPct: f(40), Disk: disk(30), DB: &results.ObserveDB{HitPct: f(100)}}, Options{Writes: true},
			Unknown, []string{"neither"}},
		{"waiting for another backend's WAL flush is the WAL's",
			&results.Observe{CPUBusyPct: f(50), Waits: []results.Wait{{Class: "CPU", Event: "CPU", SharePct: 60},
				{Class: "LWLock", Event: "WALWrite", SharePct: 25}, {Class: "IO", Event: "WALSync", SharePct: 15}}}, Options{Log: "WAL", Waits: pg},
			WAL, []string{"WAL writes and syncs took 40%"}},
		{"MariaDB's redo log writes in its words",
			&results.Observe{CPUBusyPct: f(40), Waits: waits("io/file", "innodb/innodb_log_file", 40)}, Options{Log: "redo log", Waits: my},
			WAL, []string{"redo log writes and syncs took 40%"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := DecideWith(c.o, f(2), c.opts)
			ok := got == c.want
			for _, r := range c.rule {
				ok = ok && strings.Contains(ev.Rule, r)
			}
			if !ok {
				t.Errorf("limited by %s (%s), want %s with %q", got, ev.Rule, c.want, c.rule)
			}
		})
	}
}

// A third engine's waits decide as its own words say, under class names
// neither PostgreSQL nor MariaDB uses; an engine that says nothing of its
// waits is judged without them, and one engine's classes mean nothing
// under another's words.
func TestWaitsDecideByTheEnginesWords(t *testing.T) {
	third := func(class, _ string) (string, terms.WaitKind) {
		kind := map[string]terms.WaitKind{"busy": terms.OnCPU, "disk": terms.StorageWait, "journal": terms.CommitWait, "latch": terms.LockWait}[class]
		return class, kind
	}
	on := func(class string, share float64) *results.Observe {
		return &results.Observe{CPUBusyPct: f(40), Waits: []results.Wait{{Class: "busy", Event: "busy", SharePct: 100 - share}, {Class: class, Event: class, SharePct: share}}}
	}
	cases := []struct {
		name  string
		o     *results.Observe
		waits terms.WaitKinds
		want  string
		rule  string
	}{
		{"its data-file waits", on("disk", 60), third, Storage, "data-file I/O took 60%"},
		{"its log's waits", on("journal", 50), third, WAL, "log writes and syncs took 50%"},
		{"its latches", on("latch", 45), third, Lock, "latch waits took 45%"},
		{"its CPU is no wait, though the larger share", on("disk", 35), third, Storage, "data-file I/O took 35%"},
		{"a wait it does not judge", on("client", 70), third, Unknown, "neither"},
		{"no words: no wait decides", on("disk", 60), nil, Unknown, "neither"},
		{"PostgreSQL's class under MariaDB's words", &results.Observe{CPUBusyPct: f(40), Waits: waits("IO", "DataFileRead", 60)},
			terms.Of(mariadb.Name).WaitKind, Unknown, "neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := DecideWith(c.o, nil, Options{Waits: c.waits})
			if got != c.want || !strings.Contains(ev.Rule, c.rule) {
				t.Errorf("limited by %s (%s), want %s with %q", got, ev.Rule, c.want, c.rule)
			}
		})
	}
}
