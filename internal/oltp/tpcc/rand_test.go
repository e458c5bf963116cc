package tpcc

import (
	"strings"
	"testing"
)

func TestIntRangeInclusive(t *testing.T) {
	r := NewRand(1)
	for _, tc := range []struct{ lo, hi int }{{0, 0}, {1, 10}, {-5, 5}, {5, 15}, {1, 100000}, {0, 1}} {
		seenLo, seenHi := false, false
		for range 200000 {
			v := r.IntRange(tc.lo, tc.hi)
			if v < tc.lo || v > tc.hi {
				t.Fatalf("IntRange(%d, %d) = %d", tc.lo, tc.hi, v)
			}
			seenLo = seenLo || v == tc.lo
			seenHi = seenHi || v == tc.hi
		}
		if !seenLo || !seenHi {
			t.Errorf("IntRange(%d, %d): saw lo %v, hi %v", tc.lo, tc.hi, seenLo, seenHi)
		}
	}
}

func TestNURandRangeAndEnds(t *testing.T) {
	// The three uses of clause 2.1.6: C_LAST, C_ID and OL_I_ID.
	for _, tc := range []struct{ a, x, y int }{{255, 0, 999}, {1023, 1, 3000}, {8191, 1, 100000}} {
		r := NewRand(7, uint64(tc.a))
		c := r.IntRange(0, tc.a)
		seenX, seenY := false, false
		for range 5000000 {
			v := r.NURand(tc.a, tc.x, tc.y, c)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d, %d) = %d", tc.a, tc.x, tc.y, c, v)
			}
			seenX = seenX || v == tc.x
			seenY = seenY || v == tc.y
		}
		if !seenX || !seenY {
			t.Errorf("NURand(%d, %d, %d, %d): saw x %v, y %v", tc.a, tc.x, tc.y, c, seenX, seenY)
		}
	}
}

func TestNewRandStreams(t *testing.T) {
	first := func(seed uint64, stream ...uint64) uint64 { return NewRand(seed, stream...).Uint64() }
	if a, b := first(1, 2, 3), first(1, 2, 3); a != b {
		t.Fatal("same seed and stream gave different values")
	}
	seen := map[uint64]string{}
	for name, v := range map[string]uint64{
		"1": first(1), "2": first(2), "1/0": first(1, 0), "1/2/3": first(1, 2, 3),
		"1/3/2": first(1, 3, 2), "1/2/3/0": first(1, 2, 3, 0),
	} {
		if other, ok := seen[v]; ok {
			t.Errorf("streams %s and %s start alike", name, other)
		}
		seen[v] = name
	}
}

func TestStrings(t *testing.T) {
	r := NewRand(3)
	isAlnum := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
	lengths := map[int]bool{}
	for range 10000 {
		s := r.AppendAString(nil, 14, 24)
		lengths[len(s)] = true
		if len(s) < 14 || len(s) > 24 {
			t.Fatalf("a-string [14, 24] of length %d", len(s))
		}
		for _, c := range s {
			if !isAlnum(c) {
				t.Fatalf("a-string %q holds %q", s, c)
			}
		}
		if n := r.AppendNString(nil, 16, 16); len(n) != 16 || strings.Trim(string(n), "0123456789") != "" {
			t.Fatalf("n-string %q", n)
		}
		if z := string(r.AppendZip(nil)); len(z) != 9 || !strings.HasSuffix(z, "11111") ||
			strings.Trim(z, "0123456789") != "" {
			t.Fatalf("zip %q", z)
		}
		if st := string(r.AppendState(nil)); len(st) != 2 || strings.Trim(st, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("state %q", st)
		}
	}
	if len(lengths) != 11 {
		t.Errorf("a-string [14, 24] took %d distinct lengths, want 11", len(lengths))
	}
	// Every character of the alphabet turns up, at every position of a word.
	var counts [8][256]int
	for range 20000 {
		for i, c := range r.appendChars(nil, 8, alnum) {
			counts[i][c]++
		}
	}
	for i := range counts {
		for c := range 256 {
			if isAlnum(byte(c)) != (counts[i][c] > 0) {
				t.Errorf("position %d: %q drawn %d times", i, rune(c), counts[i][c])
			}
		}
	}
}

func TestAppendDataOriginal(t *testing.T) {
	r := NewRand(4)
	const n = 100000
	orig := 0
	for range n {
		s := r.AppendData([]byte("prefix"), 26, 50)
		if !strings.HasPrefix(string(s), "prefix") || len(s)-6 < 26 || len(s)-6 > 50 {
			t.Fatalf("AppendData gave %q", s)
		}
		if strings.Contains(string(s), original) {
			orig++
		}
	}
	if orig < n*9/100 || orig > n*11/100 {
		t.Errorf("%d of %d data strings hold ORIGINAL, want about 10%%", orig, n)
	}
}

func TestLastName(t *testing.T) {
	for num, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"} {
		if got := LastName(num); got != want {
			t.Errorf("LastName(%d) = %q, want %q", num, got, want)
		}
		if got := string(AppendLastName([]byte("x"), num)); got != "x"+want {
			t.Errorf("AppendLastName(x, %d) = %q", num, got)
		}
	}
}

func TestRunConstants(t *testing.T) {
	for seed := range uint64(20000) {
		load := LoadConstants(NewRand(seed))
		if load.CLast < 0 || load.CLast > 255 || load.CID < 0 || load.CID > 1023 || load.OLIID < 0 || load.OLIID > 8191 {
			t.Fatalf("seed %d: load constants %+v out of range", seed, load)
		}
		run := RunConstants(NewRand(seed, 1), load)
		if !ValidRunCLast(load.CLast, run.CLast) {
			t.Fatalf("seed %d: run C_LAST %d invalid for load %d", seed, run.CLast, load.CLast)
		}
		if run.CID < 0 || run.CID > 1023 || run.OLIID < 0 || run.OLIID > 8191 {
			t.Fatalf("seed %d: run constants %+v out of range", seed, run)
		}
	}
	// Every load value, including the extremes, has valid run values.
	r := NewRand(5)
	for load := range 256 {
		if run := RunConstants(r, Constants{CLast: load}); !ValidRunCLast(load, run.CLast) {
			t.Fatalf("run C_LAST %d invalid for load %d", run.CLast, load)
		}
	}
}

func TestValidRunCLast(t *testing.T) {
	for _, tc := range []struct {
		load, run int
		want      bool
	}{
		{0, 65, true}, {0, 119, true}, {100, 35, true}, {200, 81, true},
		{0, 64, false}, {0, 120, false}, {0, 96, false}, {0, 112, false},
		{200, 104, false}, {200, 88, false}, {100, 100, false},
		{250, 316, false}, {-10, 60, false}, // outside [0, 255]
	} {
		if got := ValidRunCLast(tc.load, tc.run); got != tc.want {
			t.Errorf("ValidRunCLast(%d, %d) = %v, want %v", tc.load, tc.run, got, tc.want)
		}
	}
}

func TestAppendFixed(t *testing.T) {
	for _, tc := range []struct {
		v, scale int
		want     string
	}{
		{5, 2, "0.05"}, {0, 2, "0.00"}, {100, 2, "1.00"}, {10000, 2, "100.00"}, {1000000, 2, "10000.00"},
		{999999, 2, "9999.99"}, {-1000, 2, "-10.00"}, {731, 4, "0.0731"}, {2000, 4, "0.2000"}, {7, 4, "0.0007"},
		{12345, 4, "1.2345"},
	} {
		if got := string(appendFixed(nil, tc.v, tc.scale)); got != tc.want {
			t.Errorf("appendFixed(%d, %d) = %q, want %q", tc.v, tc.scale, got, tc.want)
		}
	}
}
