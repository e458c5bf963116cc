package lab

import (
	"encoding/json"
	"math/rand/v2"
	"sync"
)

// A torn cut: at a power cut, each write in flight (sent and not yet
// covered by a completed FLUSH, acknowledged or not) is kept only up to a
// random multiple of the unit from its start, the rest as it was before
// (a shorn write, FAST'13); a write no longer than the unit is whole or
// absent, so unit is also the size the device writes atomically.

// TornWrite is one write in flight at a torn cut, as the cut left it.
type TornWrite struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
	Kept   int64 `json:"kept"` // from Offset on; the rest is as before the write
	Lost   int64 `json:"lost"`
	// Acknowledged says the device had acknowledged the write (no FLUSH
	// had covered it since); else it was still running at the cut.
	Acknowledged bool `json:"acknowledged"`
}

// Torn says whether the cut kept part of the write: neither whole nor
// absent.
func (w TornWrite) Torn() bool { return w.Kept > 0 && w.Lost > 0 }

// TornRecord is what a torn cut did, written to the lab's record file.
type TornRecord struct {
	Unit int64  `json:"unit"`
	Seed uint64 `json:"seed"`
	// Writes are every write in flight at the cut, in the order they
	// were sent; Torn counts those kept in part.
	Writes []TornWrite `json:"writes"`
	Torn   int         `json:"torn"`
	// WaitedS is how long the cut waited, once asked, for writes in
	// flight (Tier.AwaitInFlight).
	WaitedS float64 `json:"waited_s"`
	// Replay says what the seed fixes, so that no one reads it as a way
	// to replay the cut: this record is the cut's only account.
	Replay string `json:"replay"`
}

// seedFixes is every record's Replay.
const seedFixes = "the seed fixes where each write in flight tears, not which writes were in flight (that follows the load's timing): the same seed does not replay this cut; the writes above, with the bytes each kept, are what it did"

// JSON is the record as the lab writes it.
func (r TornRecord) JSON() []byte {
	data, _ := json.MarshalIndent(r, "", " ") // plain values: cannot fail
	return data
}

// pending is a write not yet covered by a completed FLUSH: what the
// device held there before it, and what it was given.
type pending struct {
	off       int64
	old, data []byte
	done      bool // completed: a FLUSH from now on covers it
}

// tearer tracks the writes a torn cut may tear.
type tearer struct {
	unit int64
	seed uint64
	// power is held shared by each write while it runs and exclusively by
	// the cut: from the cut on, no write reaches the medium.
	power  sync.RWMutex
	mu     sync.Mutex
	ended  *sync.Cond // a write ended
	writes []*pending
}

func newTearer(unit int64, seed uint64) *tearer {
	t := &tearer{unit: unit, seed: seed}
	t.ended = sync.NewCond(&t.mu)
	return t
}

// begin records a write about to be made, once no write it overlaps is
// running (so that what it replaces is what the device holds, not what
// another write is changing); peek reads what the device holds there.
func (t *tearer) begin(off int64, data []byte, peek func(p []byte, off int64) error) (*pending, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.overlapsRunning(off, int64(len(data))) {
		t.ended.Wait()
	}
	w := &pending{off: off, old: make([]byte, len(data)), data: data}
	if err := peek(w.old, off); err != nil {
		return nil, err
	}
	t.writes = append(t.writes, w)
	return w, nil
}

func (t *tearer) overlapsRunning(off, n int64) bool {
	for _, w := range t.writes {
		if !w.done && w.off < off+n && off < w.off+int64(len(w.data)) {
			return true
		}
	}
	return false
}

func (t *tearer) end(w *pending) {
	t.mu.Lock()
	w.done = true
	t.ended.Broadcast()
	t.mu.Unlock()
}

// completed is the writes a FLUSH starting now covers.
func (t *tearer) completed() map[*pending]bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	done := map[*pending]bool{}
	for _, w := range t.writes {
		if w.done {
			done[w] = true
		}
	}
	return done
}

// flushed forgets the writes a completed FLUSH made durable.
func (t *tearer) flushed(done map[*pending]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept := t.writes[:0]
	for _, w := range t.writes {
		if !done[w] {
			kept = append(kept, w)
		}
	}
	clear(t.writes[len(kept):])
	t.writes = kept
}

// keep is how much of a write of n bytes a cut keeps: k units from its
// start for a random k from 0 (absent) to the write's units (whole).
func keep(rng *rand.Rand, n, unit int64) int64 {
	units := (n + unit - 1) / unit
	return min(rng.Int64N(units+1)*unit, n)
}

// cut chooses what each write keeps and applies it through write (the
// medium, without latency): every write in flight is undone, newest
// first, then its kept part written again, oldest first, so that where
// writes overlap the newer kept part wins.
func cut(writes []*pending, unit int64, seed uint64, write func(p []byte, off int64) error) (TornRecord, error) {
	rec := TornRecord{Unit: unit, Seed: seed, Writes: make([]TornWrite, len(writes)), Replay: seedFixes}
	rng := rand.New(rand.NewPCG(seed, 0x7041))
	for i, w := range writes {
		n := int64(len(w.data))
		k := keep(rng, n, unit)
		rec.Writes[i] = TornWrite{Offset: w.off, Length: n, Kept: k, Lost: n - k, Acknowledged: w.done}
		if rec.Writes[i].Torn() {
			rec.Torn++
		}
	}
	for i := len(writes) - 1; i >= 0; i-- {
		if err := write(writes[i].old, writes[i].off); err != nil {
			return rec, err
		}
	}
	for i, w := range writes {
		if k := rec.Writes[i].Kept; k > 0 {
			if err := write(w.data[:k], w.off); err != nil {
				return rec, err
			}
		}
	}
	return rec, nil
}
