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
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
	// Cache is the write-back cache's kind: CacheFlash (calibra's own,
	// non-volatile), CacheFlashVolatile, CacheWriteback or CacheUnsafe
	// (nbdkit's cache filter), or "" for none.
	Cache       string
	CacheOnRead bool
	CacheDir    string // where the cache lives (the fast tier)
	CacheBytes  int64  // the flash cache's capacity
	// Spindles is how many platter I/Os calibra's server runs at once.
	Spindles            int
	ReadIOPS, WriteIOPS int64
	// TornUnit, when not 0, makes a power cut keep each write in flight
	// only up to a random multiple of it from the write's start (torn=4k;
	// atomic=16k says the same of a device that writes 16 KiB whole);
	// TornSeed chooses, the first cut with it, each later one with the
	// next seed. 0: every write whole or absent.
	TornUnit int64
	TornSeed uint64
}

// The write-back caches a stack can have.
const (
	// CacheFlash is study 002's host flash cache (Dell Fluid Cache for
	// SAN): calibra's own server keeps written blocks in a cache file
	// with a journaled block map, acknowledges a write or FLUSH once they
	// are there (the flash is non-volatile: a power cut keeps it), and
	// destages them to the platter in the background.
	CacheFlash = "flash"
	// CacheFlashVolatile is the same cache lost at a power cut while still
	// acknowledging FLUSH: a cache that lies, which the audit must catch.
	CacheFlashVolatile = "flash-volatile"
	// CacheWriteback is nbdkit's cache filter: volatile, writing back
	// block after block when a FLUSH comes.
	CacheWriteback = "writeback"
	// CacheUnsafe is nbdkit's cache filter ignoring FLUSH: volatile, and
	// never written back, not even at a clean stop: a stack with it keeps
	// nothing between commands.
	CacheUnsafe = "unsafe"
)

// DefaultCacheBytes is the flash cache's capacity unless cache_size says:
// room for a small database, its log and a few restores of it (a restore
// rewrites the whole database, and blocks a file system frees stay in the
// cache), so that the cache does not fill with dirty blocks mid-study. It
// takes at most half of what is free in cache_dir.
const DefaultCacheBytes = 4 << 30

// CliffCacheBytes is the cliff preset's flash cache: far below what a
// short write test writes, so that it fills within seconds.
const CliffCacheBytes = 64 << 20

// DefaultSpindles is the platter's parallelism: a small RAID's four disks.
const DefaultSpindles = 4

// Served says whether calibra serves the platter itself ('calibra lab
// serve') rather than nbdkit: everything but nbdkit's cache, rate and
// error filters.
func (p Parts) Served() bool {
	return p.Cache != CacheWriteback && p.Cache != CacheUnsafe && p.Rate == "" && p.ErrorRate == ""
}

// Connections is how many NBD connections nbdfuse opens to calibra's
// server (multi-conn): libnbd keeps about two requests in flight on one,
// so two a spindle keep every spindle busy; FUSE itself passes on about
// a dozen requests at once, which bounds the useful number.
func (p Parts) Connections() int { return min(2*p.Spindles, 16) }

// KeepsNothing says whether a clean stop loses what the stack was given:
// nbdkit's unsafe cache ignores the FLUSH that writes a cache back.
func (p Parts) KeepsNothing() bool { return p.Cache == CacheUnsafe }

// flashCache says whether the stack has calibra's flash cache.
func (p Parts) flashCache() bool { return p.Cache == CacheFlash || p.Cache == CacheFlashVolatile }

// Presets are the named starting points; options after ':' change them.
var Presets = map[string]string{
	"plain":           "no filter: the stack's own overhead",
	"hdd":             "8 ms per read and per write, no cache",
	"hdd+flash-cache": "the hdd behind a non-volatile write-back flash cache in /dev/shm (journaled, destaged in the background, caching reads): study 002's",
	"hdd+nv-cache":    "the hdd behind a volatile flash cache acknowledging FLUSH, as a non-volatile one may: its speed, but a power cut loses commits; a clean stop destages it",
	"cliff":           "the hdd behind a 64 MiB flash cache: writes at the cache's speed until it is full of dirty blocks, then at the platter's (a write-saturation cliff)",
	"throttled":       "no delay, block-I/O throttling of the loop device (read_iops=200 unless given)",
}

// DefaultSize is the platter's size when the spec does not give one; the
// file is sparse, so only what is written takes room.
const DefaultSize = 8 << 30

const specFix = "give PRESET[:KEY=VALUE,...] with PRESET plain, hdd, hdd+flash-cache, hdd+nv-cache, cliff or throttled, and keys fs, size, delay, rdelay, wdelay, spindles, rate, error_rate, cache (flash, flash-volatile, writeback, unsafe or none), cache_size, cache_on_read, cache_dir, read_iops, write_iops, torn, atomic, seed"

// Parse reads a lab spec.
func Parse(spec string) (Parts, error) {
	name, opts, _ := strings.Cut(strings.TrimSpace(spec), ":")
	p := Parts{Spec: strings.TrimSpace(spec), FS: "ext4", SizeBytes: DefaultSize, CacheBytes: DefaultCacheBytes, Spindles: DefaultSpindles}
	switch name {
	case "plain":
	case "hdd":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
	case "hdd+flash-cache":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
		p.Cache, p.CacheOnRead, p.CacheDir = CacheFlash, true, "/dev/shm"
	case "hdd+nv-cache":
		// calibra's flash cache, not nbdkit's unsafe one: that never writes
		// back, so a clean stop left the platter as it was made.
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
		p.Cache, p.CacheOnRead, p.CacheDir = CacheFlashVolatile, true, "/dev/shm"
	case "cliff":
		p.RDelay, p.WDelay = 8*time.Millisecond, 8*time.Millisecond
		p.Cache, p.CacheDir, p.CacheBytes = CacheFlash, "/dev/shm", CliffCacheBytes
	case "throttled":
		p.ReadIOPS = 200
	default:
		return p, fault.Input(specFix, "--lab %q names no lab preset", spec)
	}
	seeded := false
	for _, kv := range strings.Split(opts, ",") {
		if opts == "" {
			break
		}
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || v == "" {
			return p, fault.Input(specFix, "--lab %q: %q is not KEY=VALUE", spec, kv)
		}
		if err := p.set(k, v); err != nil {
			return p, fault.Input(specFix, "--lab %q: %s=%s: %v", spec, k, v, err)
		}
		seeded = seeded || k == "seed"
	}
	if p.TornUnit > 0 && !p.Served() {
		return p, fault.Input("drop rate, error_rate and cache=writeback|unsafe, which nbdkit serves, or drop torn", "--lab %q: a torn cut needs calibra's own server, and this stack is nbdkit's", spec)
	}
	if p.TornUnit > 0 && !seeded {
		p.TornSeed = uint64(time.Now().UnixNano()) // recorded: seed= replays it
	}
	return p, nil
}

// The bounds of a lab's keys: past them a stack emulates no storage.
const (
	maxSize     = 1 << 50 // 1 PiB: the platter and the cache are sparse files
	maxDelay    = time.Minute
	maxSpindles = 256
	maxIOPS     = 100_000_000
)

// set applies one KEY=VALUE of a spec.
func (p *Parts) set(k, v string) error {
	var err error
	switch k {
	case "fs":
		if v != "ext4" && v != "xfs" {
			err = fmt.Errorf("fs is ext4 or xfs")
		}
		p.FS = v
	case "size":
		p.SizeBytes, err = parseSize(v, 256<<20)
	case "delay":
		p.RDelay, err = parseDelay(v)
		p.WDelay = p.RDelay
	case "rdelay":
		p.RDelay, err = parseDelay(v)
	case "wdelay":
		p.WDelay, err = parseDelay(v)
	case "rate":
		p.Rate, err = v, checkRate(v)
	case "error_rate":
		p.ErrorRate, err = v, checkErrorRate(v)
	case "cache":
		err = p.setCache(v)
	case "cache_size":
		p.CacheBytes, err = parseSize(v, 1<<20)
	case "spindles":
		p.Spindles, err = strconv.Atoi(v)
		if err == nil && (p.Spindles < 1 || p.Spindles > maxSpindles) {
			err = fmt.Errorf("spindles is 1 or more, and at most %d", maxSpindles)
		}
	case "cache_on_read":
		p.CacheOnRead, err = strconv.ParseBool(v)
	case "cache_dir":
		p.CacheDir = v
	case "read_iops":
		p.ReadIOPS, err = parseIOPS(v)
	case "write_iops":
		p.WriteIOPS, err = parseIOPS(v)
	case "torn", "atomic":
		p.TornUnit, err = parseUnit(v)
	case "seed":
		p.TornSeed, err = strconv.ParseUint(v, 10, 64)
	default:
		err = fmt.Errorf("unknown key %s", k)
	}
	return err
}

func (p *Parts) setCache(v string) error {
	switch v {
	case CacheFlash, CacheFlashVolatile, CacheWriteback, CacheUnsafe:
		p.Cache = v
		if p.CacheDir == "" {
			p.CacheDir = "/dev/shm"
		}
	case "none":
		p.Cache = ""
	default:
		return fmt.Errorf("cache is flash, flash-volatile, writeback, unsafe or none")
	}
	return nil
}

// maxTornUnit is the largest unit of a torn cut: past it every write a
// file system sends is whole or absent.
const maxTornUnit = 1 << 20

// parseUnit reads a torn cut's unit: whole sectors, up to maxTornUnit.
func parseUnit(s string) (int64, error) {
	n, err := parseSize(s, 1)
	if err == nil && (n%512 != 0 || n > maxTornUnit) {
		err = fmt.Errorf("%s is not a multiple of 512 up to 1M", s)
	}
	return n, err
}

// parseDelay reads a latency such as 4ms: 0 to maxDelay.
func parseDelay(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, err
	case d < 0:
		return 0, fmt.Errorf("%s is negative", s)
	case d > maxDelay:
		return 0, fmt.Errorf("%s is longer than the %s a delay may be", s, maxDelay)
	}
	return d, nil
}

// parseIOPS reads a throttle: 0 (none) to maxIOPS.
func parseIOPS(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxIOPS {
		return 0, fmt.Errorf("%q is not a whole number from 0 to %d", s, maxIOPS)
	}
	return n, nil
}

// checkRate checks nbdkit's rate filter's bits a second, such as 200M: a
// positive finite number with an optional K, M or G.
func checkRate(s string) error {
	num := strings.TrimRight(s, "kKmMgG")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || len(s)-len(num) > 1 || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > 1e15 {
		return fmt.Errorf("%q is not a rate such as 200M (bits a second)", s)
	}
	return nil
}

// checkErrorRate checks nbdkit's error filter's rate: a fraction from 0
// to 1, or a per cent such as 0.1%.
func checkErrorRate(s string) error {
	num, most := s, 1.0
	if strings.HasSuffix(s, "%") {
		num, most = strings.TrimSuffix(s, "%"), 100
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > most {
		return fmt.Errorf("%q is not a fraction from 0 to 1 or a per cent such as 0.1%%", s)
	}
	return nil
}

// parseSize reads a size such as 8G of at least least bytes.
func parseSize(s string, least int64) (int64, error) {
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
	if n > maxSize/mult {
		return 0, fmt.Errorf("%s is more than the 1P a lab's file may be", s)
	}
	if n*mult < least {
		return 0, fmt.Errorf("%s is below the %dM this needs", s, least>>20)
	}
	return n * mult, nil
}

// serverArgs is the NBD server's command line: calibra's own (exe) when it
// serves the stack, on the listening socket the stack gives it, else
// nbdkit (the program at nbdkit), which nbdfuse runs on its stdin and
// stdout. cacheDir is where a flash cache keeps its files.
func (p Parts) serverArgs(exe, nbdkit, platter, cacheDir string) []string {
	if !p.Served() {
		return p.nbdkitArgs(nbdkit, platter)
	}
	args := []string{exe, "lab", "serve", "--platter", platter, "--rdelay", ms(p.RDelay), "--wdelay", ms(p.WDelay),
		"--spindles", strconv.Itoa(p.Spindles)}
	if p.flashCache() {
		args = append(args, "--cache-dir", cacheDir, "--cache-size", strconv.FormatInt(p.CacheBytes, 10),
			"--cache-on-read="+strconv.FormatBool(p.CacheOnRead))
		if p.Cache == CacheFlashVolatile {
			args = append(args, "--volatile")
		}
	}
	return args
}

// nbdkitArgs is the nbdkit command line serving the platter: the cache
// closest to the client (it absorbs writes), then delay, rate and error in
// front of the file plugin.
func (p Parts) nbdkitArgs(nbdkit, platter string) []string {
	args := []string{nbdkit, "-s", "--exit-with-parent"}
	var params []string
	if p.Cache != "" {
		args = append(args, "--filter=cache")
		params = append(params, "cache="+p.Cache, "cache-on-read="+strconv.FormatBool(p.CacheOnRead))
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
	if p.Served() {
		parts[2] = fmt.Sprintf("nbdfuse (%d connections)", p.Connections())
	}
	if p.ReadIOPS > 0 || p.WriteIOPS > 0 {
		parts[1] = fmt.Sprintf("loop (direct I/O, blkio throttle read_iops=%d write_iops=%d)", p.ReadIOPS, p.WriteIOPS)
	}
	if !p.Served() {
		parts = append(parts, "nbdkit")
	} else {
		parts = append(parts, fmt.Sprintf("calibra lab serve (%d spindles)", p.Spindles))
	}
	if p.Cache != "" {
		c := map[string]string{
			CacheFlash:         "non-volatile flash write-back cache (journaled, destaged in the background)",
			CacheFlashVolatile: "volatile flash write-back cache acknowledging FLUSH (lost at a power cut)",
			CacheWriteback:     "volatile write-back cache (writes back on FLUSH)",
			CacheUnsafe:        "volatile write-back cache ignoring FLUSH, never written back (keeps nothing between commands)",
		}[p.Cache]
		c += fmt.Sprintf(" in %s", p.CacheDir)
		if p.flashCache() {
			c += fmt.Sprintf(", %d MiB", p.CacheBytes>>20)
		}
		if p.CacheOnRead {
			c += ", caching reads"
		}
		parts = append(parts, c)
	}
	if p.RDelay > 0 || p.WDelay > 0 {
		parts = append(parts, fmt.Sprintf("delay read %s write %s", ms(p.RDelay), ms(p.WDelay)))
	}
	if p.TornUnit > 0 {
		parts = append(parts, fmt.Sprintf("a power cut tears each write in flight at a multiple of %d bytes (seed %d)", p.TornUnit, p.TornSeed))
	}
	if p.Rate != "" {
		parts = append(parts, "rate "+p.Rate+" bit/s")
	}
	if p.ErrorRate != "" {
		parts = append(parts, "errors "+p.ErrorRate)
	}
	return strings.Join(append(parts, "platter file"), " -> ")
}

// Usable is about what the lab's file system gives the server's account:
// the platter less the file system's own metadata and the blocks ext4
// keeps for root (5%), which an unprivileged server cannot use.
func (p Parts) Usable() uint64 { return uint64(p.SizeBytes) / 100 * 92 }

// HostBytes is what the platter may still take on the storage under path:
// it is sparse, and grows to its size as the lab is written.
func (p Parts) HostBytes(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(path, DirName, platterName), &st); err == nil {
		return uint64(max(p.SizeBytes-st.Blocks*512, 0))
	}
	return uint64(p.SizeBytes)
}
