package lab

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKeepIsAWholeNumberOfUnits: a cut keeps a multiple of the unit from
// a write's start, or the whole write; over many draws every boundary,
// none and all, is chosen, and a write no longer than the unit is only
// ever whole or absent (the atomic unit).
func TestKeepIsAWholeNumberOfUnits(t *testing.T) {
	for _, c := range []struct {
		name    string
		n, unit int64
		want    []int64 // every length kept, each drawn at least once
	}{
		{"8 KiB page, 4 KiB unit", 8192, 4096, []int64{0, 4096, 8192}},
		{"8 KiB page, 512 B sectors", 8192, 512, []int64{0, 512, 1024, 4096, 7680, 8192}},
		{"8 KiB page, atomic 16 KiB", 8192, 16384, []int64{0, 8192}},
		{"16 KiB, atomic 16 KiB", 16384, 16384, []int64{0, 16384}},
		{"20 KiB, atomic 16 KiB: the tail past the unit", 20480, 16384, []int64{0, 16384, 20480}},
		{"6 KiB, 4 KiB unit: whole is the last", 6144, 4096, []int64{0, 4096, 6144}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			seen := map[int64]bool{}
			for range 2000 {
				k := keep(rng, c.n, c.unit)
				if k != c.n && k%c.unit != 0 || k < 0 || k > c.n {
					t.Fatalf("kept %d of %d: not a multiple of %d, nor the whole", k, c.n, c.unit)
				}
				seen[k] = true
			}
			for _, w := range c.want {
				if !seen[w] {
					t.Errorf("kept %d of %d never drawn in 2000 cuts: %v", w, c.n, seen)
				}
			}
			if c.n <= c.unit && len(seen) != 2 {
				t.Errorf("a write within the atomic unit was kept in part: %v", seen)
			}
		})
	}
}

// memDevice is a medium in memory.
type memDevice []byte

func (m memDevice) write(p []byte, off int64) error { copy(m[off:], p); return nil }

// TestCutKeepsWhatItRecords: after a cut, each write's kept part is on the
// medium and the rest is as before it; where two writes in flight overlap,
// the newer one's kept part wins and the older one's shows only where the
// newer one lost; the record names each write; the same seed tears the
// same way.
func TestCutKeepsWhatItRecords(t *testing.T) {
	const unit = 4
	for seed := uint64(0); seed < 50; seed++ {
		dev := memDevice(bytes.Repeat([]byte{'.'}, 32))
		var writes []*pending
		for _, w := range []struct {
			off  int64
			data string
		}{{0, "AAAAAAAAAAAA"}, {8, "BBBBBBBB"}, {20, "CCCCCC"}} {
			old := bytes.Clone(dev[w.off : w.off+int64(len(w.data))])
			writes = append(writes, &pending{off: w.off, old: old, data: []byte(w.data)})
			copy(dev[w.off:], w.data)
		}
		rec, err := cut(writes, unit, seed, dev.write)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := cut(writes, unit, seed, memDevice(make([]byte, 32)).write)
		if string(again.JSON()) != string(rec.JSON()) {
			t.Fatalf("seed %d: a second cut with the same seed tore otherwise", seed)
		}
		// What the medium must hold: the writes' kept parts, oldest first.
		want := bytes.Repeat([]byte{'.'}, 32)
		torn := 0
		for i, w := range rec.Writes {
			if w.Offset != writes[i].off || w.Length != int64(len(writes[i].data)) || w.Kept+w.Lost != w.Length {
				t.Fatalf("seed %d: write %d recorded as %+v", seed, i, w)
			}
			if w.Kept%unit != 0 && w.Lost != 0 {
				t.Fatalf("seed %d: write %d kept %d, not a multiple of %d", seed, i, w.Kept, unit)
			}
			if w.Torn() {
				torn++
			}
			copy(want[w.Offset:], writes[i].data[:w.Kept])
		}
		if !bytes.Equal(dev, want) {
			t.Fatalf("seed %d: the medium holds %q after the cut %+v, want %q", seed, dev, rec.Writes, want)
		}
		if torn != rec.Torn {
			t.Fatalf("seed %d: %d writes torn, the record says %d", seed, torn, rec.Torn)
		}
		if !strings.Contains(string(rec.JSON()), `"replay": "the seed fixes where each write in flight tears, not which writes were in flight`) {
			t.Fatalf("seed %d: the record does not say what its seed fixes: %s", seed, rec.JSON())
		}
	}
}

// TestFlushProtectsFromATornCut: a write a completed FLUSH covered is
// never torn; one completed after the FLUSH began, or still running, is
// in flight at the cut.
func TestFlushProtectsFromATornCut(t *testing.T) {
	tr := newTearer(512, 0)
	dev := memDevice(make([]byte, 1<<20))
	peek := func(p []byte, off int64) error { copy(p, dev[off:]); return nil }
	a, _ := tr.begin(0, make([]byte, 4096), peek)
	tr.end(a)
	b, _ := tr.begin(8192, make([]byte, 4096), peek) // running when the FLUSH begins
	covered := tr.completed()
	tr.end(b)
	c, _ := tr.begin(16384, make([]byte, 4096), peek) // sent after it
	tr.flushed(covered)
	if len(tr.writes) != 2 || tr.writes[0] != b || tr.writes[1] != c {
		t.Fatalf("after the FLUSH the writes in flight are %v, want the two it did not cover", tr.writes)
	}
}

// TestTierTearsOnlyWhatWasNotFlushed: on the platter tier, a torn cut
// leaves what a FLUSH covered whole, and the writes after it as the record
// says; with the flash cache, what the cache held is torn the same way.
func TestTierTearsOnlyWhatWasNotFlushed(t *testing.T) {
	for _, withCache := range []bool{false, true} {
		dir := t.TempDir()
		platter := filepath.Join(dir, "platter")
		if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := TierConfig{Platter: platter, Spindles: 2, TornUnit: 4096, TornSeed: 7}
		if withCache {
			cfg.CacheDir, cfg.CacheBytes = filepath.Join(dir, "cache"), 1<<20
			if err := os.Mkdir(cfg.CacheDir, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		tier, err := OpenTier(cfg)
		if err != nil {
			t.Fatal(err)
		}
		flushed := bytes.Repeat([]byte{'F'}, 64<<10)
		if err := tier.WriteAt(flushed, 0); err != nil {
			t.Fatal(err)
		}
		if err := tier.Flush(); err != nil {
			t.Fatal(err)
		}
		inFlight := bytes.Repeat([]byte{'N'}, 64<<10)
		if err := tier.WriteAt(inFlight, 32<<10); err != nil {
			t.Fatal(err)
		}
		rec, err := tier.TearCut()
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.Writes) != 1 || rec.Seed != 7 || rec.Unit != 4096 {
			t.Fatalf("cache %v: the cut recorded %+v, want the one write after the FLUSH", withCache, rec)
		}
		got := make([]byte, 96<<10)
		if err := tier.peek(got, 0); err != nil {
			t.Fatal(err)
		}
		kept := 32<<10 + rec.Writes[0].Kept
		want := append(bytes.Repeat([]byte{'F'}, 32<<10), bytes.Repeat([]byte{'N'}, int(rec.Writes[0].Kept))...)
		want = append(want, bytes.Repeat([]byte{'F'}, max(0, int(64<<10-kept)))...)
		want = append(want, make([]byte, 96<<10-len(want))...)
		if !bytes.Equal(got, want) {
			t.Fatalf("cache %v: after the cut (kept %d) the device does not hold the flushed write and the kept part", withCache, rec.Writes[0].Kept)
		}
	}
}

// TestOverlappingWriteWaits: a write that overlaps one still running
// waits for it, so that what it records as replaced is what the device
// held once the first was written.
func TestOverlappingWriteWaits(t *testing.T) {
	tr := newTearer(512, 0)
	dev := memDevice(bytes.Repeat([]byte{'0'}, 8192))
	peek := func(p []byte, off int64) error { copy(p, dev[off:]); return nil }
	first, _ := tr.begin(0, bytes.Repeat([]byte{'1'}, 8192), peek)
	second := make(chan *pending)
	go func() {
		w, _ := tr.begin(4096, bytes.Repeat([]byte{'2'}, 4096), peek)
		second <- w
	}()
	time.Sleep(20 * time.Millisecond) // a begin that did not wait would peek now
	copy(dev, first.data)             // the first write lands, then ends
	tr.end(first)
	if w := <-second; !bytes.Equal(w.old, bytes.Repeat([]byte{'1'}, 4096)) {
		t.Fatalf("the overlapping write recorded %q as replaced, want the first write's data", w.old[:8])
	}
}

// TestNoFlushAnsweredAfterTheCut: once the power is out, a FLUSH is never
// answered: acknowledged, it would tell the database that writes the cut
// tore are durable.
func TestNoFlushAnsweredAfterTheCut(t *testing.T) {
	platter := filepath.Join(t.TempDir(), "platter")
	if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	tier, err := OpenTier(TierConfig{Platter: platter, Spindles: 1, TornUnit: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := tier.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := tier.TearCut(); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() { answered <- tier.Flush() }()
	select {
	case err := <-answered:
		t.Fatalf("a FLUSH after the cut was answered (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestACutWaitsForWritesInFlight: a cut asked for while fewer writes than
// it waits for are in flight waits the whole wait; one whose writes are in
// flight does not wait (a cut that waited anyway would hang this test for
// its hour).
func TestACutWaitsForWritesInFlight(t *testing.T) {
	dir := t.TempDir()
	platter := filepath.Join(dir, "platter")
	if err := os.WriteFile(platter, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	tier, err := OpenTier(TierConfig{Platter: platter, Spindles: 2, TornUnit: 4096, TornSeed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := tier.WriteAt(make([]byte, 4096), int64(i)*8192); err != nil {
			t.Fatal(err)
		}
	}
	if waited := tier.AwaitInFlight(3, 20*time.Millisecond); waited < 20*time.Millisecond {
		t.Errorf("with 2 writes in flight a cut waiting for 3 waited %v, want its 20ms", waited)
	}
	tier.AwaitInFlight(2, time.Hour)
	if rec, err := tier.TearCut(); err != nil || len(rec.Writes) != 2 {
		t.Fatalf("the cut found %d writes in flight (%v), want 2", len(rec.Writes), err)
	}
}
