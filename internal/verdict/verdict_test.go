package verdict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/results"
)

func f(v float64) *float64 { return &v }
func i(v int64) *int64     { return &v }

func TestDecide(t *testing.T) {
	waits := func(class, event string, share float64) []results.Wait {
		return []results.Wait{{Class: "CPU", Event: "CPU", SharePct: 100 - share}, {Class: class, Event: event, SharePct: share}}
	}
	cases := []struct {
		name   string
		o      *results.Observe
		driver *float64
		want   string
		rule   string // fragment of the evidence's rule
	}{
		{"no observations", nil, nil, Unknown, "no observations"},
		// The quick study's iocal on this 2-core machine: 94.6% CPU busy,
		// reads reaching the device, the device far from busy.
		{"cpu-saturated iocal with reads on the device is not storage",
			&results.Observe{WindowS: 10, CPUBusyPct: f(94.6), Disk: &results.ObserveDisk{RIOPS: f(23802), UtilPct: f(61), AwaitMs: f(0.2)},
				DB: &results.ObserveDB{BlksRead: i(284450), HitPct: f(40)}, Waits: waits("IO", "DataFileRead", 35)},
			nil, CPU, "CPUs were busy 95%"},
		{"a busy device is storage, even with busy CPUs",
			&results.Observe{CPUBusyPct: f(95), Disk: &results.ObserveDisk{UtilPct: f(99), AwaitMs: f(8)}}, nil, Storage, "device was busy 99%"},
		// The device step: fio alone used 14% of the machine, but
		// the CPUs were 82% busy.
		{"another load on the host", &results.Observe{CPUBusyPct: f(81.7), CPUOutsidePct: f(66),
			Disk: &results.ObserveDisk{UtilPct: f(85)}}, nil, Host, "outside calibra and the database used 66%"},
		{"a little background is not another load", &results.Observe{CPUBusyPct: f(30), CPUOutsidePct: f(4),
			Disk: &results.ObserveDisk{UtilPct: f(92)}}, nil, Storage, "device was busy 92%"},
		{"the driver's own CPU", &results.Observe{CPUBusyPct: f(97)}, f(30), Driver, "calibra itself used 30%"},
		{"commit flushes", &results.Observe{CPUBusyPct: f(50), DB: &results.ObserveDB{HitPct: f(99.5)},
			Waits: waits("IO", "WALSync", 45)}, f(5), WAL, "WAL writes and syncs took 45%"},
		{"commit flushes, as PostgreSQL 17+ names them", &results.Observe{CPUBusyPct: f(50), Waits: waits("IO", "WalSync", 40)}, nil, WAL, "WAL writes and syncs took 40%"},
		{"row locks", &results.Observe{CPUBusyPct: f(40), Waits: waits("Lock", "tuple", 60)}, nil, Lock, "Lock waits took 60%"},
		{"MariaDB's row locks and latches together", &results.Observe{CPUBusyPct: f(40), Waits: []results.Wait{
			{Class: "CPU", Event: "CPU", SharePct: 50}, {Class: "lock/row", Event: "innodb/row_lock", SharePct: 20},
			{Class: "synch/mutex", Event: "innodb/lock_mutex", SharePct: 15}, {Class: "io/file", Event: "innodb/innodb_data_file", SharePct: 15}}},
			nil, Lock, "Lock waits took 35%"},
		{"MariaDB's redo log writes", &results.Observe{CPUBusyPct: f(40), Waits: waits("io/file", "innodb/innodb_log_file", 40)}, nil, WAL, "WAL writes and syncs took 40%"},
		// The quick study's oltp: 99.3% hits, CPU not saturated.
		{"served from memory", &results.Observe{CPUBusyPct: f(70), DB: &results.ObserveDB{HitPct: f(99.3)},
			Waits: waits("IO", "DataFileRead", 5)}, f(8), Cache, "99.3% of the blocks"},
		{"nothing stands out", &results.Observe{CPUBusyPct: f(30), Disk: &results.ObserveDisk{UtilPct: f(20)},
			DB: &results.ObserveDB{HitPct: f(80)}}, nil, Unknown, "neither"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev := Decide(c.o, c.driver)
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
		by, ev := Decide(st.Observe, driver)
		fmt.Fprintf(&b, "%s %q window: %s: %s\n", st.Kind, st.Name, by, ev.Rule)
		if h, ok := st.Body.(results.HeadlineLimiter); ok {
			if by, ev, ok := h.HeadlineLimit(); ok {
				fmt.Fprintf(&b, "%s %q headline: %s: %s\n", st.Kind, st.Name, by, ev.Rule)
			}
		}
	}
	golden.Check(t, "testdata/quick.verdicts", []byte(b.String()))
}
