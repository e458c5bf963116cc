package verdict

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

// TestNearestNamesTheResourceNearItsThreshold: the quick study's point at
// 89.6% CPU with calibra at 22% is the CPU's, not unknown; a point where
// nothing came half way stays unknown.
func TestNearestNamesTheResourceNearItsThreshold(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	o := &results.Observe{CPUBusyPct: f(89.6), Disk: &results.ObserveDisk{UtilPct: f(40)}, CPUOutsidePct: f(5)}
	if by, _ := Decide(o, f(22)); by != Unknown {
		t.Errorf("plain Decide changed: %s", by)
	}
	by, ev := DecideWith(o, f(22), Options{Nearest: true})
	if by != CPU || !strings.Contains(ev.Rule, "nearest") || !strings.Contains(ev.Rule, "89.6%") {
		t.Errorf("got %s (%s), want cpu named as the nearest", by, ev.Rule)
	}
	idle := &results.Observe{CPUBusyPct: f(20), Disk: &results.ObserveDisk{UtilPct: f(10)}}
	if by, ev := DecideWith(idle, f(2), Options{Nearest: true}); by != Unknown {
		t.Errorf("nothing came half way, yet %s (%s)", by, ev.Rule)
	}
}

// TestServerSideNeverDriver: when the server issues the reads, calibra's
// CPU is evidence, never the verdict, even far above its threshold.
func TestServerSideNeverDriver(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, o := range []*results.Observe{
		{CPUBusyPct: f(95)},
		{CPUBusyPct: f(30)},
		{CPUBusyPct: f(60), Disk: &results.ObserveDisk{UtilPct: f(85)}},
	} {
		by, ev := DecideWith(o, f(60), Options{ServerSide: true, Nearest: true})
		if by == Driver || ev.DriverCPUPct == nil {
			t.Errorf("server-side at CPU %v: %s (%s), driver evidence %v", *o.CPUBusyPct, by, ev.Rule, ev.DriverCPUPct)
		}
	}
	if by, _ := DecideWith(&results.Observe{CPUBusyPct: f(30)}, f(60), Options{}); by != Driver {
		t.Errorf("a client-side test at 60%% calibra is %s, want driver", by)
	}
}
