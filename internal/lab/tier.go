package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/calibra-bench/calibra/internal/safefs"
)

// blockSize is the flash tier's cache line.
const blockSize = 4096

// destageRun is the most contiguous dirty blocks destaged in one platter
// write (a disk writes a run for about the cost of one seek).
const destageRun = 64

// destageAfter is how long a block stays dirty before it is destaged, so
// that a block written again and again (a log's last page) costs the
// platter one write, not one per commit; a cache more than half dirty
// destages at once.
const destageAfter = time.Second

// TierConfig is the storage calibra serves itself ('calibra lab serve'):
// a platter with a latency and a number of spindles, and optionally a
// write-back flash cache in front of it.
type TierConfig struct {
	Platter        string
	RDelay, WDelay time.Duration
	// Spindles is how many platter I/Os proceed at once; the others wait,
	// as they queue on a small RAID's disks.
	Spindles int
	// CacheDir holds the cache file and its block map's journal ("" for
	// no cache): an existing directory of calibra's own (the stack makes
	// it with safefs.PrivateTemp), or the tier refuses it.
	CacheDir    string
	CacheBytes  int64
	CacheOnRead bool
	// Volatile drops the cache at every start (a power cut lost it) while
	// still acknowledging FLUSH at flash speed: a cache that lies.
	Volatile bool
	// TornUnit, when not 0, makes TearCut keep each write in flight only
	// up to a random multiple of it from its start, chosen by TornSeed.
	TornUnit int64
	TornSeed uint64
}

// Tier is the served device: reads hit the cache or go to the platter;
// writes land in the cache (durable once written there: the flash is
// non-volatile, its block map journaled) and are destaged to the platter
// in the background.
type Tier struct {
	cfg     TierConfig
	size    int64
	platter *os.File
	disk    chan struct{} // the spindles
	// platterWritten: a write went straight to the platter since the last
	// FLUSH, which must then sync it.
	platterWritten atomic.Bool
	torn           *tearer // nil: a cut keeps each write whole or absent

	cache, journal *os.File
	mu             sync.Mutex
	wake           *sync.Cond // signalled after each destaged run
	blocks         map[int64]*line
	free           []int32
	dirty          map[int64]struct{}
	clean          map[int64]struct{}
	slots          int
	// queue is the dirty blocks in the order they became dirty, from
	// qhead; entries a later change made stale are skipped.
	queue     []dirtyMark
	qhead     int
	evictions uint64
	draining  bool // a clean shutdown: everything dirty is due
	closing   bool
	destagers sync.WaitGroup
}

type dirtyMark struct {
	block int64
	since time.Time
}

type line struct {
	slot    int32
	dirty   bool
	since   time.Time // dirty since
	gen     uint64    // bumped by each write, so a destage knows it raced one
	staging bool      // being written to the platter
}

// Journal records: the block map's changes, applied in order at start.
const (
	recMap   = 1 // block is in slot, dirty
	recDirty = 2
	recClean = 3
	recFree  = 4
)

const recLen = 13 // type u8, block i64, slot i32

// OpenTier opens the platter and, with a cache, replays its journal.
func OpenTier(cfg TierConfig) (*Tier, error) {
	if cfg.Spindles < 1 {
		cfg.Spindles = 1
	}
	f, err := os.OpenFile(cfg.Platter, os.O_RDWR|syscall.O_NOFOLLOW, 0) // safefs: the stack's platter in calibra-lab, checked by MkdirOwn in Up
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	t := &Tier{cfg: cfg, size: st.Size(), platter: f, disk: make(chan struct{}, cfg.Spindles)}
	if cfg.TornUnit > 0 {
		t.torn = newTearer(cfg.TornUnit, cfg.TornSeed)
	}
	if cfg.CacheDir == "" {
		return t, nil
	}
	if err := t.openCache(); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

func (t *Tier) openCache() error {
	t.wake = sync.NewCond(&t.mu)
	t.blocks, t.dirty, t.clean = map[int64]*line{}, map[int64]struct{}{}, map[int64]struct{}{}
	// The directory is in a place every account can write (/dev/shm):
	// only one calibra made, and no other account can change, is used.
	if err := safefs.Own(t.cfg.CacheDir); err != nil {
		return err
	}
	if err := safefs.CheckDir(t.cfg.CacheDir, ""); err != nil {
		return err
	}
	cachePath, journalPath := filepath.Join(t.cfg.CacheDir, "cache"), filepath.Join(t.cfg.CacheDir, "journal")
	var err error
	if t.cache, err = openCacheFile(cachePath, t.cfg.Volatile); err != nil {
		return err
	}
	if t.journal, err = openCacheFile(journalPath, t.cfg.Volatile); err != nil {
		return err
	}
	// The cache file is sparse; on a tmpfs that fills up, a write to it
	// would fail, so it takes at most half of what is free.
	var fs unix.Statfs_t
	if err := unix.Statfs(t.cfg.CacheDir, &fs); err == nil {
		if half := int64(fs.Bavail) * fs.Bsize / 2; t.cfg.CacheBytes > half {
			fmt.Fprintf(os.Stderr, "calibra lab serve: the cache is %d MiB, half of what is free in %s, not %d MiB\n", half>>20, t.cfg.CacheDir, t.cfg.CacheBytes>>20)
			t.cfg.CacheBytes = half
		}
	}
	slots := int32(t.cfg.CacheBytes / blockSize)
	if slots < 1 {
		return fmt.Errorf("the cache of %d bytes holds no %d-byte block", t.cfg.CacheBytes, blockSize)
	}
	if err := t.cache.Truncate(int64(slots) * blockSize); err != nil {
		return err
	}
	t.slots = int(slots)
	used := make([]bool, slots)
	if err := t.replay(used); err != nil {
		return err
	}
	for s := slots - 1; s >= 0; s-- {
		if !used[s] {
			t.free = append(t.free, s)
		}
	}
	// The replayed map, written afresh: the journal stays as long as the
	// map, not as long as the history.
	if err := t.compact(journalPath); err != nil {
		return err
	}
	for i := 0; i < t.cfg.Spindles; i++ {
		t.destagers.Add(1)
		go t.destager()
	}
	return nil
}

// replay applies the journal; a torn last record (the cut came mid-write)
// is ignored: its write was never acknowledged.
func (t *Tier) replay(used []bool) error {
	data, err := io.ReadAll(t.journal)
	if err != nil {
		return err
	}
	for len(data) >= recLen {
		typ, b, s := data[0], int64(binary.LittleEndian.Uint64(data[1:])), int32(binary.LittleEndian.Uint32(data[9:]))
		data = data[recLen:]
		if s < 0 || int(s) >= len(used) {
			continue
		}
		switch typ {
		case recMap:
			t.blocks[b] = &line{slot: s, dirty: true}
			used[s] = true
		case recDirty, recClean:
			if l := t.blocks[b]; l != nil {
				l.dirty = typ == recDirty
			}
		case recFree:
			delete(t.blocks, b)
			used[s] = false
		}
	}
	for b, l := range t.blocks {
		if l.dirty {
			t.dirty[b] = struct{}{}
			t.queue = append(t.queue, dirtyMark{block: b}) // due at once
		} else {
			t.clean[b] = struct{}{}
		}
	}
	return nil
}

func (t *Tier) compact(journalPath string) error {
	var buf []byte
	for b, l := range t.blocks {
		buf = appendRec(buf, recMap, b, l.slot)
		if !l.dirty {
			buf = appendRec(buf, recClean, b, l.slot)
		}
	}
	tmp := journalPath + ".new"
	// A compaction a power cut interrupted may have left one.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) { // safefs: in the cache directory checked by Own in openCache
		return err
	}
	// Written sequentially from here on: each record lands at the end.
	f, err := safefs.CreateFile(tmp, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := safefs.Rename(filepath.Dir(journalPath), filepath.Base(tmp), filepath.Base(journalPath)); err != nil {
		f.Close()
		return err
	}
	t.journal.Close()
	t.journal = f
	return nil
}

func appendRec(buf []byte, typ byte, block int64, slot int32) []byte {
	buf = append(buf, typ)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(block))
	return binary.LittleEndian.AppendUint32(buf, uint32(slot))
}

// record appends one journal record with its own write, so that a SIGKILL
// after it returns keeps it (the flash is non-volatile). Called with mu.
func (t *Tier) record(typ byte, block int64, slot int32) error {
	_, err := t.journal.Write(appendRec(nil, typ, block, slot))
	return err
}

// Size is the platter's.
func (t *Tier) Size() int64 { return t.size }

// onPlatter does one platter I/O: a spindle, the latency, the transfer.
func (t *Tier) onPlatter(delay time.Duration, io func() error) error {
	t.disk <- struct{}{}
	defer func() { <-t.disk }()
	time.Sleep(delay)
	return io()
}

// ReadAt serves from the cache what it holds; anything else costs one
// platter read, and with CacheOnRead its whole blocks are kept.
func (t *Tier) ReadAt(p []byte, off int64) error {
	if t.cache == nil {
		return t.onPlatter(t.cfg.RDelay, func() error { return readFull(t.platter, p, off) })
	}
	for {
		t.mu.Lock()
		hit, err := t.fromCache(p, off, true)
		epoch := t.evictions
		t.mu.Unlock()
		if hit || err != nil {
			return err
		}
		if err := t.onPlatter(t.cfg.RDelay, func() error { return readFull(t.platter, p, off) }); err != nil {
			return err
		}
		t.mu.Lock()
		if t.evictions != epoch {
			// A block destaged and evicted while the platter was read may
			// have been read before its destage landed: read again.
			t.mu.Unlock()
			continue
		}
		// What the cache holds is newer than the platter.
		_, err = t.fromCache(p, off, false)
		if err == nil && t.cfg.CacheOnRead {
			err = t.keepRead(p, off)
		}
		t.mu.Unlock()
		return err
	}
}

// fromCache copies the cached parts of [off, off+len(p)) into p. With
// allOrNothing it copies only when every block is cached (a hit).
func (t *Tier) fromCache(p []byte, off int64, allOrNothing bool) (bool, error) {
	end := off + int64(len(p))
	if allOrNothing {
		for b := off / blockSize; b*blockSize < end; b++ {
			if t.blocks[b] == nil {
				return false, nil
			}
		}
	}
	for b := off / blockSize; b*blockSize < end; b++ {
		l := t.blocks[b]
		if l == nil {
			continue
		}
		lo, hi := max(off, b*blockSize), min(end, (b+1)*blockSize)
		if err := readFull(t.cache, p[lo-off:hi-off], int64(l.slot)*blockSize+lo-b*blockSize); err != nil {
			return false, err
		}
	}
	return true, nil
}

// keepRead caches the whole uncached blocks of a platter read, as clean.
func (t *Tier) keepRead(p []byte, off int64) error {
	end := off + int64(len(p))
	for b := (off + blockSize - 1) / blockSize; (b+1)*blockSize <= end; b++ {
		if t.blocks[b] != nil {
			continue
		}
		s, ok := t.slot()
		if !ok {
			return nil
		}
		if _, err := t.cache.WriteAt(p[b*blockSize-off:(b+1)*blockSize-off], int64(s)*blockSize); err != nil {
			return err
		}
		if err := t.record(recMap, b, s); err != nil {
			return err
		}
		if err := t.record(recClean, b, s); err != nil {
			return err
		}
		t.blocks[b] = &line{slot: s}
		t.clean[b] = struct{}{}
	}
	return nil
}

// slot finds a free cache slot, evicting a clean block if need be. Called
// with mu.
func (t *Tier) slot() (int32, bool) {
	if n := len(t.free); n > 0 {
		s := t.free[n-1]
		t.free = t.free[:n-1]
		return s, true
	}
	for b := range t.clean { // any clean block: map order is random
		l := t.blocks[b]
		if l.staging {
			continue
		}
		if err := t.record(recFree, b, l.slot); err != nil {
			return 0, false
		}
		delete(t.clean, b)
		delete(t.blocks, b)
		t.evictions++
		return l.slot, true
	}
	return 0, false
}

// WriteAt puts whole blocks in the cache, durable when the call returns;
// a partial block not cached, or a write when the cache is all dirty, goes
// to the platter (write-through) at the platter's latency.
func (t *Tier) WriteAt(p []byte, off int64) error {
	if t.torn == nil {
		return t.writeAt(p, off, t.cfg.WDelay)
	}
	t.torn.power.RLock()
	defer t.torn.power.RUnlock()
	w, err := t.torn.begin(off, p, t.peek)
	if err != nil {
		return err
	}
	err = t.writeAt(p, off, t.cfg.WDelay)
	t.torn.end(w)
	return err
}

// writeAt writes to the cache or, with delay, to the platter.
func (t *Tier) writeAt(p []byte, off int64, delay time.Duration) error {
	if t.cache == nil {
		return t.through(p, off, delay)
	}
	end := off + int64(len(p))
	for b := off / blockSize; b*blockSize < end; b++ {
		lo, hi := max(off, b*blockSize), min(end, (b+1)*blockSize)
		part := p[lo-off : hi-off]
		t.mu.Lock()
		cached, err := t.writeCached(b, part, lo)
		t.mu.Unlock()
		if err != nil {
			return err
		}
		if !cached {
			if err := t.through(part, lo, delay); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *Tier) through(p []byte, off int64, delay time.Duration) error {
	err := t.onPlatter(delay, func() error { _, err := t.platter.WriteAt(p, off); return err })
	t.platterWritten.Store(true)
	return err
}

// writeCached writes part (at off, inside block b) to the cache when it
// can. Called with mu.
func (t *Tier) writeCached(b int64, part []byte, off int64) (bool, error) {
	l := t.blocks[b]
	if l == nil {
		if len(part) < blockSize {
			return false, nil
		}
		s, ok := t.slot()
		if !ok {
			return false, nil
		}
		// The data first, then the map entry that makes it visible.
		if _, err := t.cache.WriteAt(part, int64(s)*blockSize); err != nil {
			return false, err
		}
		if err := t.record(recMap, b, s); err != nil {
			return false, err
		}
		l := &line{slot: s}
		t.blocks[b] = l
		t.markDirty(b, l)
		return true, nil
	}
	if _, err := t.cache.WriteAt(part, int64(l.slot)*blockSize+off-b*blockSize); err != nil {
		return false, err
	}
	l.gen++
	if !l.dirty {
		if err := t.record(recDirty, b, l.slot); err != nil {
			return false, err
		}
		delete(t.clean, b)
		t.markDirty(b, l)
	}
	return true, nil
}

func (t *Tier) markDirty(b int64, l *line) {
	l.dirty, l.since = true, time.Now()
	t.dirty[b] = struct{}{}
	t.queue = append(t.queue, dirtyMark{block: b, since: l.since})
}

// nextDue is the oldest dirty block due for destaging and not being
// destaged, or -1. Called with mu.
func (t *Tier) nextDue() int64 {
	for t.qhead < len(t.queue) {
		m := t.queue[t.qhead]
		if l := t.blocks[m.block]; l != nil && l.dirty && l.since.Equal(m.since) {
			break
		}
		t.qhead++
	}
	if t.qhead > 4096 && t.qhead > len(t.queue)/2 {
		t.queue = append(t.queue[:0], t.queue[t.qhead:]...)
		t.qhead = 0
	}
	urgent := t.draining || len(t.dirty) > t.slots/2
	for i := t.qhead; i < len(t.queue) && i < t.qhead+destageRun*4; i++ {
		m := t.queue[i]
		l := t.blocks[m.block]
		if l == nil || !l.dirty || !l.since.Equal(m.since) || l.staging {
			continue
		}
		if !urgent && time.Since(m.since) < destageAfter {
			return -1
		}
		return m.block
	}
	return -1
}

// Flush makes what was written durable: the cache file and its journal
// synced (on tmpfs a no-op: the emulated flash keeps what was written to
// it), and the platter when a write went through to it. A volatile cache
// acknowledges without doing anything, which is its lie.
func (t *Tier) Flush() error {
	var covered map[*pending]bool
	if t.torn != nil {
		// A FLUSH answered once the cut began would acknowledge writes
		// the cut is tearing.
		t.torn.power.RLock()
		defer t.torn.power.RUnlock()
		covered = t.torn.completed()
	}
	err := t.flush()
	if err == nil && t.torn != nil {
		t.torn.flushed(covered)
	}
	return err
}

func (t *Tier) flush() error {
	var errs []error
	if t.cache != nil && !t.cfg.Volatile {
		errs = append(errs, t.cache.Sync(), t.journal.Sync())
	}
	if t.platterWritten.Swap(false) {
		errs = append(errs, t.platter.Sync())
	}
	return errors.Join(errs...)
}

// peek reads what the device holds at off, without a platter's latency:
// the platter, and over it what the cache holds.
func (t *Tier) peek(p []byte, off int64) error {
	if t.cache == nil {
		return readFull(t.platter, p, off)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := readFull(t.platter, p, off); err != nil {
		return err
	}
	_, err := t.fromCache(p, off, false)
	return err
}

// AwaitInFlight waits until at least n writes are in flight (not yet
// covered by a FLUSH), or for at most wait, and returns how long it
// waited. A cut asked for during a burst of writes lands in it even when
// the asking took milliseconds on a busy machine: by then a FLUSH (a
// commit's) had covered most of the burst, and a torn cut found one or
// two writes in flight where, asked on an idle machine, it found forty.
func (t *Tier) AwaitInFlight(n int, wait time.Duration) time.Duration {
	start := time.Now()
	for time.Since(start) < wait {
		t.torn.mu.Lock()
		in := len(t.torn.writes)
		t.torn.mu.Unlock()
		if in >= n {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	return time.Since(start)
}

// TearCut is a torn power cut: from now on no write reaches the medium,
// and each write in flight is kept only up to a random multiple of
// TornUnit from its start (TornSeed chooses), the rest put back as it
// was. The caller then exits without Close: what the cut left stays.
func (t *Tier) TearCut() (TornRecord, error) {
	t.torn.power.Lock() // never released: the power is out
	t.torn.mu.Lock()
	writes := t.torn.writes
	t.torn.writes = nil
	t.torn.mu.Unlock()
	rec, err := cut(writes, t.torn.unit, t.torn.seed, func(p []byte, off int64) error { return t.writeAt(p, off, 0) })
	if err == nil {
		err = t.flush() // what the medium holds now, on the host's files
	}
	return rec, err
}

// destager writes dirty blocks to the platter, a contiguous run at a time.
func (t *Tier) destager() {
	defer t.destagers.Done()
	buf := make([]byte, destageRun*blockSize)
	for {
		t.mu.Lock()
		first := t.nextDue()
		for first == -1 {
			if t.closing {
				t.mu.Unlock()
				return
			}
			t.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			t.mu.Lock()
			first = t.nextDue()
		}
		for first > 0 && t.stageable(first-1) {
			first--
		}
		var run []*line
		var gens []uint64
		var err error
		for b := first; len(run) < destageRun && t.stageable(b); b++ {
			l := t.blocks[b]
			if err = readFull(t.cache, buf[len(run)*blockSize:(len(run)+1)*blockSize], int64(l.slot)*blockSize); err != nil {
				break
			}
			l.staging = true
			run, gens = append(run, l), append(gens, l.gen)
		}
		t.mu.Unlock()
		if err == nil {
			err = t.onPlatter(t.cfg.WDelay, func() error {
				_, err := t.platter.WriteAt(buf[:len(run)*blockSize], first*blockSize)
				return err
			})
		}
		t.mu.Lock()
		for i, l := range run {
			l.staging = false
			b := first + int64(i)
			if err == nil && l.gen == gens[i] {
				if rerr := t.record(recClean, b, l.slot); rerr == nil {
					l.dirty = false
					delete(t.dirty, b)
					t.clean[b] = struct{}{}
				}
			}
		}
		t.wake.Broadcast()
		t.mu.Unlock()
		if err != nil {
			fmt.Fprintf(os.Stderr, "calibra lab serve: destage: %v\n", err)
			time.Sleep(time.Second)
		}
	}
}

func (t *Tier) stageable(b int64) bool {
	l := t.blocks[b]
	return l != nil && l.dirty && !l.staging
}

// Dirty is how many blocks the platter does not have yet.
func (t *Tier) Dirty() int {
	if t.cache == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirty)
}

// Close destages everything (a clean shutdown), then removes the cache:
// the platter alone is then the whole disk.
func (t *Tier) Close() error {
	if t.cache == nil {
		return t.platter.Close()
	}
	t.mu.Lock()
	t.draining = true
	for len(t.dirty) > 0 {
		t.wake.Wait() // destagers broadcast after each run
	}
	t.closing = true
	t.mu.Unlock()
	t.destagers.Wait()
	err := errors.Join(t.platter.Sync(), t.platter.Close(), t.cache.Close(), t.journal.Close())
	if err == nil {
		err = removeCache(t.cfg.CacheDir)
	}
	return err
}

// openCacheFile opens the cache's file or journal in its directory: never
// through a link, made exclusively when new, emptied when the cache is
// volatile (a power cut lost it), and only a regular file.
func openCacheFile(path string, empty bool) (*os.File, error) {
	flags := os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	if empty {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0) // safefs: in the cache directory checked by Own in openCache; a link is refused
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, 0o600) // safefs: as above, and new
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

func readFull(f *os.File, p []byte, off int64) error {
	n, err := f.ReadAt(p, off)
	if err == io.EOF && n == len(p) {
		return nil
	}
	return err
}
