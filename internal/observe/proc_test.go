package observe

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

func between(t *testing.T, dir0, dir1 string, devices []string, dt float64) *results.Observe {
	t.Helper()
	a := readOS(filepath.Join("testdata", dir0), devices)
	b := readOS(filepath.Join("testdata", dir1), devices)
	o := &results.Observe{Missing: map[string]string{}}
	osRates(a, b, dt, o)
	return o
}

func want(t *testing.T, name string, got *float64, v float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s is absent, want %v", name, v)
	} else if *got != v {
		t.Errorf("%s = %v, want %v", name, *got, v)
	}
}

// TestOSRatesFromKnownDeltas: the hand-made readings are one second apart
// with round deltas, so every rate is known in advance.
func TestOSRatesFromKnownDeltas(t *testing.T) {
	o := between(t, "hand0", "hand1", []string{"sda"}, 1)
	if len(o.Missing) != 0 {
		t.Errorf("missing %v, want nothing", o.Missing)
	}
	// Δ ticks: user 150 nice 50 system 60 idle 600 iowait 100 irq 20 softirq 20
	// (guest 100 is already in user and must not count twice): 1000 in all.
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{
		{"cpu_busy_pct", o.CPUBusyPct, 30},
		{"cpu_user_pct", o.CPUUserPct, 20},
		{"cpu_sys_pct", o.CPUSysPct, 10},
		{"cpu_iowait_pct", o.CPUIOWaitPct, 10},
		{"cpu_steal_pct", o.CPUStealPct, 0},
		// 100 reads of 1600 sectors in 400 ms, 400 writes of 8000 sectors in 1200 ms.
		{"r_iops", o.Disk.RIOPS, 100},
		{"w_iops", o.Disk.WIOPS, 400},
		{"r_mbps", o.Disk.RMBps, 0.819},
		{"w_mbps", o.Disk.WMBps, 4.096},
		{"r_await_ms", o.Disk.RAwaitMs, 4},
		{"w_await_ms", o.Disk.WAwaitMs, 3},
		{"await_ms", o.Disk.AwaitMs, 3.2},
		{"queue_size", o.Disk.QueueSize, 2},
		{"util_pct", o.Disk.UtilPct, 50},
		{"io some_pct", o.IOPressure.SomePct, 25},
		{"io full_pct", o.IOPressure.FullPct, 10},
	} {
		want(t, c.name, c.got, c.want)
	}
	if m := o.Mem; m == nil || *m.AvailableBytes != 3900000*1024 || *m.CachedBytes != 3100000*1024 ||
		*m.DirtyBytes != 2048*1024 || *m.WritebackBytes != 16*1024 {
		t.Errorf("mem %+v: want the second reading's MemAvailable, Cached, Dirty, Writeback in bytes", o.Mem)
	}
}

// TestOSRatesOverTwoSeconds: the same deltas over two seconds halve the
// rates but not the per-I/O averages.
func TestOSRatesOverTwoSeconds(t *testing.T) {
	o := between(t, "hand0", "hand1", []string{"sda"}, 2)
	want(t, "r_iops", o.Disk.RIOPS, 50)
	want(t, "await_ms", o.Disk.AwaitMs, 3.2)
	want(t, "util_pct", o.Disk.UtilPct, 25)
	want(t, "queue_size", o.Disk.QueueSize, 1)
	want(t, "io some_pct", o.IOPressure.SomePct, 12.5)
}

// TestOSRatesFromRealReadings: two readings of this machine a second apart
// while dd wrote with O_DIRECT.
func TestOSRatesFromRealReadings(t *testing.T) {
	o := between(t, "real0", "real1", []string{"vda"}, 1)
	// Δ ticks: user 1, system 41, idle 101, iowait 52, softirq 9: 204.
	want(t, "cpu_busy_pct", o.CPUBusyPct, 25)
	want(t, "cpu_iowait_pct", o.CPUIOWaitPct, 25.49)
	want(t, "cpu_sys_pct", o.CPUSysPct, 24.51)
	// Δ vda: 5 reads (40 sectors, 1 ms), 13891 writes (1777568 sectors, 732 ms).
	want(t, "r_iops", o.Disk.RIOPS, 5)
	want(t, "w_iops", o.Disk.WIOPS, 13891)
	want(t, "w_mbps", o.Disk.WMBps, 910.115)
	want(t, "await_ms", o.Disk.AwaitMs, 0.053)
	want(t, "util_pct", o.Disk.UtilPct, 70)
	want(t, "io some_pct", o.IOPressure.SomePct, 58.176)
}

// TestOSRatesNeverInventAZero: no I/O leaves the averages absent with a
// reason, a counter that goes backwards leaves the disk absent, and a
// missing file says what is missing.
func TestOSRatesNeverInventAZero(t *testing.T) {
	idle := between(t, "hand0", "hand0", []string{"dm-0"}, 1)
	if idle.Disk == nil || idle.Disk.AwaitMs != nil || idle.Disk.RAwaitMs != nil || idle.Missing["disk.await_ms"] == "" {
		t.Errorf("an idle device: disk %+v, missing %v; want no await and a reason", idle.Disk, idle.Missing)
	}
	want(t, "idle r_iops", idle.Disk.RIOPS, 0)
	if idle.CPUBusyPct != nil || idle.Missing["cpu"] == "" {
		t.Errorf("no CPU time elapsed: busy %v, missing %v", idle.CPUBusyPct, idle.Missing)
	}

	back := between(t, "hand1", "hand0", []string{"sda"}, 1)
	if back.Disk != nil || back.Missing["disk"] == "" || back.CPUBusyPct != nil {
		t.Errorf("counters going backwards: disk %+v, busy %v, missing %v", back.Disk, back.CPUBusyPct, back.Missing)
	}

	none := between(t, "mounts", "mounts", []string{"sda"}, 1)
	for _, k := range []string{"cpu", "disk", "io_pressure", "mem"} {
		if none.Missing[k] == "" {
			t.Errorf("a proc root without %s: missing %v", k, none.Missing)
		}
	}

	absent := between(t, "hand0", "hand1", []string{"sdz"}, 1)
	if absent.Disk != nil || absent.Missing["disk"] == "" {
		t.Errorf("a device not in diskstats: disk %+v, missing %v", absent.Disk, absent.Missing)
	}
}

func TestBlockDeviceUnderPath(t *testing.T) {
	sys := filepath.Join("testdata", "sys")
	for _, c := range []struct{ path, want, err string }{
		{"/home/x", "sda", ""},             // partition 8:1 → its disk
		{"/data/pg", "dm-0", ""},           // device mapper, measured as itself
		{"/srv/my disk/pg", "nvme0n1", ""}, // octal escapes in mountinfo
		{"/mnt/btrfs/pg", "sdb", ""},       // anonymous 0:45, matched by source name
		{"/mnt/over", "dm-0", ""},          // the later of two mounts on one point
		{"/mnt/ram/x", "", "tmpfs"},
		{"/mnt/gone", "", "not a block device"},
	} {
		got, err := blockDevice(filepath.Join("testdata", "mounts"), sys, c.path)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want an error naming %q", c.path, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	if got, err := blockDevice(filepath.Join("testdata", "real0"), sys, "/work/main"); err != nil || got != "vda" {
		t.Errorf("this machine's recorded mount table: %q, %v; want vda", got, err)
	}
}

func TestLocalHost(t *testing.T) {
	for host, want := range map[string]bool{"/var/run/postgresql": true, "localhost": true, "127.0.0.1": true, "::1": true,
		"db.example.com": false, "192.0.2.1": false, "": false} {
		if got := LocalHost(host); got != want {
			t.Errorf("LocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}
