// Package lab builds emulated storage under a path, so that a study can
// rehearse a storage tier anywhere: a backing file (the "platter") served
// by nbdkit, whose filters add latency, a bandwidth cap, errors and a
// volatile write-back cache; exposed as a file by nbdfuse; a loop device
// with direct I/O over that file; a file system on the loop device, mounted
// at a private directory the study then uses as its path. No kernel module
// beyond loop and FUSE is needed (no device-mapper, bcache or nbd).
//
// A power cut is SIGKILL of nbdkit: its write-back cache (an unlinked file)
// dies with it, as a volatile cache does when power fails.
package lab

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/calibra-bench/calibra/internal/fault"
)

// Parts are the pieces of a stack, from a spec such as "hdd+flash-cache"
// or "hdd:rdelay=4ms,fs=xfs".
type Parts struct {
	Spec           string
	FS             string // ext4 or xfs
	SizeBytes      int64
	RDelay, WDelay time.Duration
	Rate           string // nbdkit rate filter, bits a second (e.g. 200M)
	ErrorRate      string // nbdkit error filter, e.g. 0.1%
	Cache          bool   // volatile write-back cache (nbdkit cache filter)
	// CacheUnsafe makes the cache ignore FLUSH: the speed of a
	// non-volatile cache, but the emulated one is volatile, so a power
	// cut loses what it held (the audit shows it).
	CacheUnsafe         bool
	CacheOnRead         bool
	CacheDir            string // where the cache lives (the fast tier)
	ReadIOPS, WriteIOPS int64
}

// Presets are the named starting points; options after ':' change them.
var Presets = map[string]string{
	"plain":           "no filter: the stack's own overhead",
	"hdd":             "8 ms per read and per write, no cache",
	"hdd+flash-cache": "the hdd behind a volatile write-back cache (also caching reads) in /dev/shm",
	"hdd+nv-cache":    "the hdd behind a cache that ignores FLUSH, as a non-volatile (flash- or battery-backed) one may: its speed; the emulated cache is volatile, so a power cut loses commits",
	"throttled":       "no delay, block-I/O throttling of the loop device (read_iops=200 unless given)",
}

// DefaultSize is the platter's size when the spec does not give one; the
// file is sparse, so only what is written takes room.
const DefaultSize = 8 << 30

const specFix = "give PRESET[:KEY=VALUE,...] with PRESET plain, hdd, hdd+flash-cache, hdd+nv-cache or throttled, and keys fs, size, delay, rdelay, wdelay, rate, error_rate, cache (writeback, unsafe or none), cache_on_read, cache_dir, read_iops, write_iops"

// Parse reads a lab spec.
func Parse(spec string) (Parts, error) {
	name, opts, _ := strings.Cut(strings.TrimSpace(spec), ":")
	p := Parts{Spec: strings.TrimSpace(spec), FS: "ext4", SizeBytes: DefaultSize}
	switch name {
	case "plain":
	case "hdd":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
	case "hdd+flash-cache":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
		p.Cache, p.CacheOnRead, p.CacheDir = true, true, "/dev/shm"
	case "hdd+nv-cache":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
		p.Cache, p.CacheUnsafe, p.CacheOnRead, p.CacheDir = true, true, true, "/dev/shm"
	case "throttled":
		p.ReadIOPS = 200
	default:
		return p, fault.Input(specFix, "--lab %q names no lab preset", spec)
	}
	if opts == "" {
		return p, nil
	}
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return p, fault.Input(specFix, "--lab %q: %q is not KEY=VALUE", spec, kv)
		}
		var err error
		switch k {
		case "fs":
			if v != "ext4" && v != "xfs" {
				err = fmt.Errorf("fs is ext4 or xfs")
			}
			p.FS = v
		case "size":
			p.SizeBytes, err = parseSize(v)
		case "delay":
			p.RDelay, err = time.ParseDuration(v)
			p.WDelay = p.RDelay
		case "rdelay":
			p.RDelay, err = time.ParseDuration(v)
		case "wdelay":
			p.WDelay, err = time.ParseDuration(v)
		case "rate":
			p.Rate = v
		case "error_rate":
			p.ErrorRate = v
		case "cache":
			switch v {
			case "writeback":
				p.Cache = true
				if p.CacheDir == "" {
					p.CacheDir = "/dev/shm"
				}
			case "unsafe":
				p.Cache, p.CacheUnsafe = true, true
				if p.CacheDir == "" {
					p.CacheDir = "/dev/shm"
				}
			case "none":
				p.Cache, p.CacheUnsafe = false, false
			default:
				err = fmt.Errorf("cache is writeback, unsafe or none")
			}
		case "cache_on_read":
			p.CacheOnRead, err = strconv.ParseBool(v)
		case "cache_dir":
			p.CacheDir = v
		case "read_iops":
			p.ReadIOPS, err = strconv.ParseInt(v, 10, 64)
		case "write_iops":
			p.WriteIOPS, err = strconv.ParseInt(v, 10, 64)
		default:
			err = fmt.Errorf("unknown key %s", k)
		}
		if err == nil && (p.RDelay < 0 || p.WDelay < 0 || p.ReadIOPS < 0 || p.WriteIOPS < 0) {
			err = fmt.Errorf("%s is negative", k)
		}
		if err != nil {
			return p, fault.Input(specFix, "--lab %q: %s=%s: %v", spec, k, v, err)
		}
	}
	return p, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	u := strings.ToUpper(s)
	for suf, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if strings.HasSuffix(u, suf) {
			mult, u = m, strings.TrimSuffix(u, suf)
		}
	}
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size such as 8G", s)
	}
	if n*mult < 256<<20 {
		return 0, fmt.Errorf("%s is below the 256M a file system and a database need", s)
	}
	return n * mult, nil
}

// nbdkitArgs is the nbdkit command line serving the platter: the cache
// closest to the client (it absorbs writes), then delay, rate and error in
// front of the file plugin.
func (p Parts) nbdkitArgs(platter string) []string {
	args := []string{"nbdkit", "-s", "--exit-with-parent"}
	var params []string
	if p.Cache {
		args = append(args, "--filter=cache")
		mode := "writeback"
		if p.CacheUnsafe {
			mode = "unsafe"
		}
		params = append(params, "cache="+mode, "cache-on-read="+strconv.FormatBool(p.CacheOnRead))
	}
	if p.RDelay > 0 || p.WDelay > 0 {
		args = append(args, "--filter=delay")
		params = append(params, "rdelay="+ms(p.RDelay), "wdelay="+ms(p.WDelay))
	}
	if p.Rate != "" {
		args = append(args, "--filter=rate")
		params = append(params, "rate="+p.Rate)
	}
	if p.ErrorRate != "" {
		args = append(args, "--filter=error")
		params = append(params, "error-rate="+p.ErrorRate)
	}
	args = append(args, "file", platter)
	return append(args, params...)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
}

// Chain describes the stack top to bottom, for the record and the report.
func (p Parts) Chain() string {
	parts := []string{p.FS, "loop (direct I/O)", "nbdfuse"}
	if p.ReadIOPS > 0 || p.WriteIOPS > 0 {
		parts[1] = fmt.Sprintf("loop (direct I/O, blkio throttle read_iops=%d write_iops=%d)", p.ReadIOPS, p.WriteIOPS)
	}
	if p.Cache {
		c := "volatile write-back cache in " + p.CacheDir
		if p.CacheUnsafe {
			c += " ignoring FLUSH"
		}
		if p.CacheOnRead {
			c += ", caching reads"
		}
		parts = append(parts, c)
	}
	if p.RDelay > 0 || p.WDelay > 0 {
		parts = append(parts, fmt.Sprintf("delay read %s write %s", ms(p.RDelay), ms(p.WDelay)))
	}
	if p.Rate != "" {
		parts = append(parts, "rate "+p.Rate+" bit/s")
	}
	if p.ErrorRate != "" {
		parts = append(parts, "errors "+p.ErrorRate)
	}
	return strings.Join(append(parts, "platter file"), " -> ")
}
