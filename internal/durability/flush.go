package durability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/results"
)

// probeTime is how long the flush probe writes at most; a slow disk still
// makes a few hundred flushes in it. A fast device stops sooner, once it
// has made probeFlushes (its rate then known within a few percent) in at
// least probeMinTime: on a cache that acknowledges thousands a second the
// probe's three seconds of fsyncs cost more CPU than they told.
const (
	probeTime    = 3 * time.Second
	probeMinTime = 500 * time.Millisecond
	probeFlushes = 1000
)

// maxRotationalFlushes is more flushes a second than any rotating disk
// can make durable at queue depth 1 (a 15k rpm disk turns 250 times a
// second): more means a cache acknowledged them.
const maxRotationalFlushes = 300

// ProbeFlush measures write+fdatasync pairs of 8 KiB (a WAL page) at queue
// depth 1 in dir, and compares the rate with what device says it is.
func ProbeFlush(ctx context.Context, dir, device string) (*results.FlushProbe, error) {
	f, err := os.CreateTemp(dir, "calibra-flush-probe-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name()) // safefs: the probe's own CreateTemp file, removed by the name it got
	defer f.Close()
	const size = 1 << 20
	if err := f.Truncate(size); err != nil {
		return nil, err
	}
	if err := unix.Fsync(int(f.Fd())); err != nil {
		return nil, err
	}
	buf := make([]byte, 8192)
	var n int
	start := time.Now()
	for el := time.Duration(0); el < probeTime && !(n >= probeFlushes && el >= probeMinTime) && ctx.Err() == nil; el = time.Since(start) {
		for i := range buf {
			buf[i] = byte(n + i)
		}
		if _, err := f.WriteAt(buf, int64(n*len(buf))%size); err != nil {
			return nil, err
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return nil, err
		}
		n++
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	el := time.Since(start)
	p := &results.FlushProbe{FsyncsPerS: float64(n) / el.Seconds(), LatencyMsMean: el.Seconds() * 1000 / float64(n), Device: device}
	if q := queueDir(device); q != "" {
		if v, err := os.ReadFile(filepath.Join(q, "rotational")); err == nil {
			rot := strings.TrimSpace(string(v)) == "1"
			p.Rotational = &rot
		}
		if v, err := os.ReadFile(filepath.Join(q, "write_cache")); err == nil {
			p.WriteCache = strings.TrimSpace(string(v))
		}
	}
	switch {
	case p.Rotational != nil && *p.Rotational && p.FsyncsPerS > maxRotationalFlushes:
		p.VolatileCache = true
		p.Verdict = fmt.Sprintf("%.0f flushes a second on a rotating device, more than a disk can make durable (at most about 250): a cache acknowledges them, safe only if it survives power loss", p.FsyncsPerS)
	case p.WriteCache == "write back":
		p.VolatileCache = true
		p.Verdict = "the device declares a volatile write cache: commits are durable only if it honours FLUSH (a power-loss audit on the lab tests that; on real storage, pull the plug)"
	default:
		p.Verdict = "no volatile write cache declared, and a flush rate the device can make durable"
	}
	return p, nil
}

// queueDir is /sys/class/block/DEV/queue for a disk, or its parent's for
// a partition; "" when unknown.
func queueDir(device string) string {
	if device == "" {
		return ""
	}
	base := filepath.Join("/sys/class/block", filepath.Base(device))
	for _, d := range []string{filepath.Join(base, "queue"), filepath.Join(base, "..", "queue")} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}
