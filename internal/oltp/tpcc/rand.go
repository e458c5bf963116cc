// Package tpcc holds the database-free parts of the TPC-C specification
// (revision 5.11) that calibra's driver needs: a fast deterministic RNG,
// NURand, customer last names and the initial population generator, which
// emits COPY text or PostgreSQL's COPY binary.
package tpcc

import (
	"math/bits"
	"slices"
)

// Rand is a SplitMix64 generator: one add and a mixing function per value,
// with no interface call, so it stays cheap in the per-character hot path.
// A Rand is not safe for concurrent use; give each goroutine its own.
type Rand struct{ s uint64 }

// goldenGamma is SplitMix64's increment, 2^64 divided by the golden ratio.
const goldenGamma = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's finaliser; it also hashes seeds and stream ids.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// NewRand returns a Rand determined by seed and the stream ids (for example
// table, warehouse and district), so that independent parts of a run draw
// from independent sequences whatever order they run in.
func NewRand(seed uint64, stream ...uint64) *Rand {
	r := seedRand(seed, stream...)
	return &r
}

// seedRand is NewRand by value, so the generator's per-batch Rand can live
// on the stack.
func seedRand(seed uint64, stream ...uint64) Rand {
	h := mix64(seed + goldenGamma)
	for _, s := range stream {
		// Hashing h with each id in turn makes (1, 2), (2, 1) and (1, 2, 0)
		// distinct streams.
		h = mix64(h ^ mix64(s+goldenGamma))
	}
	return Rand{h}
}

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 {
	r.s += goldenGamma
	return mix64(r.s)
}

// IntRange returns a value uniform in [lo, hi], both inclusive. It scales a
// 64-bit draw by multiply-shift (Lemire); the bias, below 2^-40 for the
// ranges TPC-C uses, is far under anything measurable.
func (r *Rand) IntRange(lo, hi int) int {
	if hi < lo {
		panic("tpcc: IntRange with hi < lo")
	}
	n, _ := bits.Mul64(r.Uint64(), uint64(hi-lo)+1)
	return lo + int(n)
}

// NURand is the non-uniform random function of clause 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r *Rand) NURand(a, x, y, c int) int {
	return ((r.IntRange(0, a)|r.IntRange(x, y))+c)%(y-x+1) + x
}

// charset is an alphabet drawn from by fill. chars is 64 bytes long so
// that indexing with i&63 needs no bounds check; only the first size entries
// are ever drawn.
type charset struct {
	chars   [64]byte
	size    uint64
	perWord int // characters taken from one 64-bit draw
}

func newCharset(chars string, perWord int) *charset {
	c := &charset{size: uint64(len(chars)), perWord: perWord}
	copy(c.chars[:], chars)
	return c
}

// The a-string alphabet is the 62 letters and digits: never a tab, newline
// or backslash, so COPY text needs no escaping. The per-word counts keep
// size^perWord under 2^64/1000, so even the joint distribution of one
// word's characters is uniform to within 0.1%.
var (
	alnum   = newCharset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 8)
	digits  = newCharset("0123456789", 16)
	letters = newCharset("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 10)
)

// fill sets every byte of b to a random character of cs. Each draw is read as
// a fraction in [0, 1) and yields one character per multiplication by the
// alphabet size (its base-size digits), so one Uint64 covers several
// characters.
func (r *Rand) fill(b []byte, cs *charset) {
	for len(b) > 0 {
		x := r.Uint64()
		n := min(len(b), cs.perWord)
		for i := range b[:n] {
			hi, lo := bits.Mul64(x, cs.size)
			b[i] = cs.chars[hi&63]
			x = lo
		}
		b = b[n:]
	}
}

// grow extends dst by n bytes and returns it with the new, unset tail. When
// dst has the capacity (the loader reuses buffers) nothing is zeroed.
func grow(dst []byte, n int) (out, tail []byte) {
	l := len(dst)
	out = slices.Grow(dst, n)[:l+n]
	return out, out[l:]
}

// appendChars appends n random characters of cs.
func (r *Rand) appendChars(dst []byte, n int, cs *charset) []byte {
	dst, tail := grow(dst, n)
	r.fill(tail, cs)
	return dst
}

// AppendAString appends a random a-string [lo .. hi] (clause 4.3.2.2):
// alphanumeric characters, length uniform in [lo, hi].
func (r *Rand) AppendAString(dst []byte, lo, hi int) []byte {
	return r.appendChars(dst, r.IntRange(lo, hi), alnum)
}

// AppendNString appends a random n-string [lo .. hi]: decimal digits, length
// uniform in [lo, hi].
func (r *Rand) AppendNString(dst []byte, lo, hi int) []byte {
	return r.appendChars(dst, r.IntRange(lo, hi), digits)
}

const original = "ORIGINAL"

// AppendData appends an a-string [lo .. hi] that, for 10% of calls, holds
// "ORIGINAL" at a random position: the rule for I_DATA and S_DATA (clause
// 4.3.3.1). lo must be at least 8.
func (r *Rand) AppendData(dst []byte, lo, hi int) []byte {
	dst, tail := grow(dst, r.IntRange(lo, hi))
	r.fill(tail, alnum)
	if r.IntRange(1, 10) == 1 {
		copy(tail[r.IntRange(0, len(tail)-len(original)):], original)
	}
	return dst
}

// AppendZip appends a zip code: a random n-string of 4 digits followed by
// "11111" (clause 4.3.2.7).
func (r *Rand) AppendZip(dst []byte) []byte {
	return append(r.appendChars(dst, 4, digits), "11111"...)
}

// AppendState appends a state: 2 random upper-case letters.
func (r *Rand) AppendState(dst []byte) []byte {
	return r.appendChars(dst, 2, letters)
}
