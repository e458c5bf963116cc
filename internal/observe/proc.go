package observe

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/calibra-bench/calibra/internal/results"
)

// osCounters is one reading of the kernel's cumulative counters (and the
// memory gauges). A part that could not be read has its reason in missing,
// keyed by the results.Observe field it would feed.
type osCounters struct {
	cpu     *cpuTicks
	disk    *diskCounters
	psi     *psiTotals
	mem     *memInfo
	missing map[string]string
}

// cpuTicks is the aggregate "cpu" line of /proc/stat, in USER_HZ ticks.
type cpuTicks struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total leaves out guest and guest_nice: the kernel already counts them in
// user and nice.
func (c cpuTicks) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// diskCounters sums the /proc/diskstats fields iostat uses over the
// measured devices. Ticks are milliseconds; sectors are 512 bytes whatever
// the device's block size.
type diskCounters struct {
	reads, readSectors, readTicks    uint64
	writes, writeSectors, writeTicks uint64
	ioTicks, weightedTicks           uint64
}

// psiTotals are the cumulative stall times of /proc/pressure/io, in µs.
type psiTotals struct {
	some uint64
	full *uint64 // the "full" line is absent on kernels before 5.13 for some resources
}

// memInfo holds the /proc/meminfo gauges that show page-cache effects, in
// bytes; nil when the kernel does not report the field.
type memInfo struct {
	available, cached, dirty, writeback *uint64
}

// readOS reads every OS counter under the proc root; devices are kernel
// block device names (empty: no disk counters, the reason is the caller's).
func readOS(proc string, devices []string) osCounters {
	c := osCounters{missing: map[string]string{}}
	var err error
	if c.cpu, err = readCPU(filepath.Join(proc, "stat")); err != nil {
		c.missing["cpu"] = err.Error()
	}
	if len(devices) > 0 {
		if c.disk, err = readDisks(filepath.Join(proc, "diskstats"), devices); err != nil {
			c.missing["disk"] = err.Error()
		}
	}
	if c.psi, err = readPSI(filepath.Join(proc, "pressure", "io")); err != nil {
		c.missing["io_pressure"] = err.Error()
	}
	if c.mem, err = readMem(filepath.Join(proc, "meminfo")); err != nil {
		c.missing["mem"] = err.Error()
	}
	return c
}

func readCPU(path string) (*cpuTicks, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cpu times: %w", err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return nil, fmt.Errorf("read cpu times: %s does not start with an aggregate cpu line", path)
	}
	v, err := parseUints(f[1:9])
	if err != nil {
		return nil, fmt.Errorf("read cpu times from %s: %w", path, err)
	}
	return &cpuTicks{user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}, nil
}

func readDisks(path string, devices []string) (*diskCounters, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read disk counters: %w", err)
	}
	defer f.Close()
	want := map[string]bool{}
	for _, d := range devices {
		want[d] = true
	}
	var sum diskCounters
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// major minor name reads merged sectors ticks writes merged sectors ticks inflight io_ticks weighted ...
		fl := strings.Fields(sc.Text())
		if len(fl) < 14 || !want[fl[2]] {
			continue
		}
		v, err := parseUints(fl[3:14])
		if err != nil {
			return nil, fmt.Errorf("read disk counters of %s: %w", fl[2], err)
		}
		sum.reads += v[0]
		sum.readSectors += v[2]
		sum.readTicks += v[3]
		sum.writes += v[4]
		sum.writeSectors += v[6]
		sum.writeTicks += v[7]
		sum.ioTicks += v[9]
		sum.weightedTicks += v[10]
		found++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read disk counters: %w", err)
	}
	if found != len(want) {
		return nil, fmt.Errorf("%s lacks some of %s", path, strings.Join(devices, ", "))
	}
	return &sum, nil
}

func readPSI(path string) (*psiTotals, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("the kernel has no %s (pressure stall information needs Linux 4.20+ and CONFIG_PSI)", path)
		}
		return nil, fmt.Errorf("read I/O pressure: %w", err)
	}
	var p psiTotals
	seenSome := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if k != "total" {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("read I/O pressure from %s: %w", path, err)
			}
			switch f[0] {
			case "some":
				p.some, seenSome = n, true
			case "full":
				p.full = &n
			}
		}
	}
	if !seenSome {
		return nil, fmt.Errorf("read I/O pressure: %s has no \"some\" total", path)
	}
	return &p, nil
}

func readMem(path string) (*memInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read memory: %w", err)
	}
	defer f.Close()
	var m memInfo
	fields := map[string]**uint64{"MemAvailable": &m.available, "Cached": &m.cached, "Dirty": &m.dirty, "Writeback": &m.writeback}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "Dirty:            1234 kB"
		k, rest, ok := strings.Cut(sc.Text(), ":")
		dst, wanted := fields[k]
		if !ok || !wanted {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("read %s from %s: %w", k, path, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		*dst = &n
	}
	return &m, sc.Err()
}

func parseUints(fields []string) ([]uint64, error) {
	v := make([]uint64, len(fields))
	for i, s := range fields {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, err
		}
		v[i] = n
	}
	return v, nil
}

// osRates fills o with what happened between two readings dt seconds
// apart. A counter that went backwards (a reset, a device replaced) makes
// its metrics absent rather than wrong.
func osRates(a, b osCounters, dt float64, o *results.Observe) {
	for k, why := range b.missing {
		o.Missing[k] = why
	}
	for k, why := range a.missing {
		o.Missing[k] = why
	}
	if a.cpu != nil && b.cpu != nil {
		cpuRates(*a.cpu, *b.cpu, o)
	}
	if a.disk != nil && b.disk != nil {
		o.Disk = diskRates(*a.disk, *b.disk, dt, o.Missing)
	}
	if a.psi != nil && b.psi != nil {
		o.IOPressure = psiRates(*a.psi, *b.psi, dt, o.Missing)
	}
	if b.mem != nil {
		o.Mem = &results.ObserveMem{AvailableBytes: b.mem.available, CachedBytes: b.mem.cached,
			DirtyBytes: b.mem.dirty, WritebackBytes: b.mem.writeback}
	}
}

func cpuRates(a, b cpuTicks, o *results.Observe) {
	total := float64(b.total()) - float64(a.total())
	if total <= 0 || b.idle < a.idle || b.iowait < a.iowait {
		o.Missing["cpu"] = "no CPU time elapsed between the two readings of /proc/stat"
		return
	}
	pct := func(ticks ...uint64) *float64 {
		var d float64
		for i := 0; i < len(ticks); i += 2 {
			d += float64(ticks[i+1]) - float64(ticks[i])
		}
		return ptr(round3(100 * d / total))
	}
	idle := 100 * (float64(b.idle-a.idle) + float64(b.iowait-a.iowait)) / total
	o.CPUBusyPct = ptr(round3(math.Max(0, 100-idle)))
	o.CPUUserPct = pct(a.user, b.user, a.nice, b.nice)
	o.CPUSysPct = pct(a.system, b.system, a.irq, b.irq, a.softirq, b.softirq)
	o.CPUIOWaitPct = pct(a.iowait, b.iowait)
	o.CPUStealPct = pct(a.steal, b.steal)
}

func diskRates(a, b diskCounters, dt float64, missing map[string]string) *results.ObserveDisk {
	if b.reads < a.reads || b.writes < a.writes || b.readTicks < a.readTicks || b.writeTicks < a.writeTicks ||
		b.readSectors < a.readSectors || b.writeSectors < a.writeSectors || b.ioTicks < a.ioTicks || b.weightedTicks < a.weightedTicks {
		missing["disk"] = "the disk counters went backwards in the window (device reset or replaced)"
		return nil
	}
	if dt <= 0 {
		missing["disk"] = "no time elapsed between the two readings of /proc/diskstats"
		return nil
	}
	reads, writes := float64(b.reads-a.reads), float64(b.writes-a.writes)
	rTicks, wTicks := float64(b.readTicks-a.readTicks), float64(b.writeTicks-a.writeTicks)
	d := &results.ObserveDisk{
		RIOPS:     ptr(round3(reads / dt)),
		WIOPS:     ptr(round3(writes / dt)),
		RMBps:     ptr(round3(float64(b.readSectors-a.readSectors) * 512 / 1e6 / dt)),
		WMBps:     ptr(round3(float64(b.writeSectors-a.writeSectors) * 512 / 1e6 / dt)),
		QueueSize: ptr(round3(float64(b.weightedTicks-a.weightedTicks) / (dt * 1000))),
		UtilPct:   ptr(round3(math.Min(100, 100*float64(b.ioTicks-a.ioTicks)/(dt*1000)))),
	}
	if reads > 0 {
		d.RAwaitMs = ptr(round3(rTicks / reads))
	} else {
		missing["disk.r_await_ms"] = "no read completed in the window"
	}
	if writes > 0 {
		d.WAwaitMs = ptr(round3(wTicks / writes))
	} else {
		missing["disk.w_await_ms"] = "no write completed in the window"
	}
	if reads+writes > 0 {
		d.AwaitMs = ptr(round3((rTicks + wTicks) / (reads + writes)))
	} else {
		missing["disk.await_ms"] = "no I/O completed in the window"
	}
	return d
}

func psiRates(a, b psiTotals, dt float64, missing map[string]string) *results.IOPressure {
	if b.some < a.some || dt <= 0 {
		missing["io_pressure"] = "the I/O pressure totals went backwards in the window"
		return nil
	}
	p := &results.IOPressure{SomePct: ptr(round3(math.Min(100, float64(b.some-a.some)/(dt*1e4))))}
	if a.full != nil && b.full != nil && *b.full >= *a.full {
		p.FullPct = ptr(round3(math.Min(100, float64(*b.full-*a.full)/(dt*1e4))))
	} else {
		missing["io_pressure.full_pct"] = "the kernel reports no \"full\" line for I/O pressure"
	}
	return p
}

func ptr[T any](v T) *T { return &v }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
