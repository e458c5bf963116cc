package lab

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		spec  string
		want  Parts // the fields compared
		nbd   string
		wrong string // part of the error, "" when valid
	}{
		{spec: "hdd", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4"},
		{spec: "hdd+flash-cache", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheFlash, CacheOnRead: true, CacheDir: "/dev/shm"},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4 --cache-dir C --cache-size 4294967296 --cache-on-read=true"},
		{spec: "hdd+flash-cache:cache=flash-volatile,cache_size=64M,spindles=2", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheFlashVolatile, CacheOnRead: true, CacheDir: "/dev/shm", CacheBytes: 64 << 20, Spindles: 2},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 2 --cache-dir C --cache-size 67108864 --cache-on-read=true --volatile"},
		{spec: "hdd+nv-cache", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheFlashVolatile, CacheOnRead: true, CacheDir: "/dev/shm"},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4 --cache-dir C --cache-size 4294967296 --cache-on-read=true --volatile"},
		{spec: "hdd:cache=unsafe", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheUnsafe, CacheDir: "/dev/shm"},
			nbd: "nbdkit -s --exit-with-parent --filter=cache --filter=delay file P cache=unsafe cache-on-read=false rdelay=8ms wdelay=8ms"},
		{spec: "cliff", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheFlash, CacheDir: "/dev/shm", CacheBytes: CliffCacheBytes},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4 --cache-dir C --cache-size 67108864 --cache-on-read=false"},
		{spec: "throttled:read_iops=150,write_iops=90", want: Parts{FS: "ext4", ReadIOPS: 150, WriteIOPS: 90},
			nbd: "calibra lab serve --platter P --rdelay 0ms --wdelay 0ms --spindles 4"},
		{spec: "plain:fs=xfs,rdelay=0.5ms,rate=200M,error_rate=1%,cache=writeback,cache_dir=/tmp", want: Parts{FS: "xfs", RDelay: 500 * time.Microsecond, Rate: "200M", ErrorRate: "1%", Cache: CacheWriteback, CacheDir: "/tmp"},
			nbd: "nbdkit -s --exit-with-parent --filter=cache --filter=delay --filter=rate --filter=error file P cache=writeback cache-on-read=false rdelay=0.5ms wdelay=0ms rate=200M error-rate=1%"},
		{spec: "hdd:torn=4k,seed=42", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, TornUnit: 4096, TornSeed: 42},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4"},
		{spec: "hdd+flash-cache:atomic=16k,seed=1", want: Parts{FS: "ext4", RDelay: 8 * time.Millisecond, WDelay: 8 * time.Millisecond, Cache: CacheFlash, CacheOnRead: true, CacheDir: "/dev/shm", TornUnit: 16384, TornSeed: 1},
			nbd: "calibra lab serve --platter P --rdelay 8ms --wdelay 8ms --spindles 4 --cache-dir C --cache-size 4294967296 --cache-on-read=true"},
		{spec: "hdd:torn=1000", wrong: "multiple of 512"},
		{spec: "hdd:torn=2M", wrong: "up to 1M"},
		{spec: "hdd:cache=writeback,torn=4k", wrong: "calibra's own server"},
		{spec: "ssd", wrong: "names no lab preset"},
		{spec: "hdd:delay", wrong: "not KEY=VALUE"},
		{spec: "hdd:fs=btrfs", wrong: "ext4 or xfs"},
		{spec: "hdd:size=10M", wrong: "below"},
		{spec: "hdd:delay=-1ms", wrong: "negative"},
		{spec: "hdd:colour=red", wrong: "unknown key"},
		{spec: "hdd:cache=fast", wrong: "cache is flash"},
		{spec: "hdd:spindles=0", wrong: "1 or more"},
	} {
		p, err := Parse(c.spec)
		if c.wrong != "" {
			if err == nil || !strings.Contains(err.Error(), c.wrong) {
				t.Errorf("Parse(%q) = %v, want an error about %q", c.spec, err, c.wrong)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.spec, err)
			continue
		}
		got := p
		got.Spec, got.SizeBytes = "", 0
		if c.want.CacheBytes == 0 {
			c.want.CacheBytes = DefaultCacheBytes
		}
		if c.want.Spindles == 0 {
			c.want.Spindles = DefaultSpindles
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.spec, got, c.want)
		}
		if nbd := strings.Join(p.serverArgs("calibra", "nbdkit", "P", "C"), " "); nbd != c.nbd {
			t.Errorf("Parse(%q): nbdkit %s, want %s", c.spec, nbd, c.nbd)
		}
	}
}
