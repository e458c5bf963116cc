package dss

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestEveryStreamOrderIsAPermutationOfThe22(t *testing.T) {
	for s := range streamOrders {
		got := slices.Clone(Order(s))
		slices.Sort(got)
		for i, q := range got {
			if q != i+1 {
				t.Fatalf("stream %d's order %v is not a permutation of 1..22", s, Order(s))
			}
		}
	}
	if !slices.Equal(Order(0)[:4], []int{14, 2, 9, 20}) || !slices.Equal(Order(41), Order(1)) {
		t.Errorf("stream 0 starts %v; stream 41 runs %v, want stream 1's", Order(0)[:4], Order(41))
	}
}

var placeholder = regexp.MustCompile(`\[[A-Z0-9]+\]`)

// Every drawn parameter lands in its query, none is left over, the draw is
// reproducible, and the values stay in the specification's ranges.
func TestParamsFollowTheQgenRules(t *testing.T) {
	if len(colors) != 92 || len(nations) != 25 {
		t.Fatalf("%d colours, %d nations; dbgen has 92 and 25", len(colors), len(nations))
	}
	seen := map[string]map[string]bool{}
	for seed := range uint64(200) {
		for q := 1; q <= Queries; q++ {
			p := NewParams(seed, int(seed%5), q, 0.1)
			if text := Text(q, p); placeholder.MatchString(text) {
				t.Fatalf("Q%d keeps %s after substitution", q, placeholder.FindString(text))
			}
			if again := NewParams(seed, int(seed%5), q, 0.1); !mapsEqual(p, again) {
				t.Fatalf("Q%d's parameters are not reproducible: %v then %v", q, p, again)
			}
			for k, v := range p {
				key := strconv.Itoa(q) + " " + k
				if seen[key] == nil {
					seen[key] = map[string]bool{}
				}
				seen[key][v] = true
			}
		}
	}
	within := func(key string, lo, hi int) {
		for v := range seen[key] {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				t.Errorf("%s = %s, outside %d..%d", key, v, lo, hi)
			}
		}
	}
	within("1 DELTA", 60, 120)
	within("2 SIZE", 1, 50)
	within("18 QUANTITY", 312, 315)
	within("19 QUANTITY2", 10, 20)
	within("22 I1", 10, 34)
	for v := range seen["4 DATE"] {
		if v < "1993-01-01" || v > "1997-10-01" || !strings.HasSuffix(v, "-01") {
			t.Errorf("Q4 DATE %s is not the first of a month from January 1993 to October 1997", v)
		}
	}
	if len(seen["1 DELTA"]) < 40 || len(seen["9 COLOR"]) < 60 {
		t.Errorf("the draws barely vary: %d deltas, %d colours", len(seen["1 DELTA"]), len(seen["9 COLOR"]))
	}
	if p := NewParams(1, 0, 11, 0.1); p["FRACTION"] != "0.001" {
		t.Errorf("Q11 FRACTION at SF 0.1 is %s, want 0.0001 / SF = 0.001", p["FRACTION"])
	}
	for q := 1; q <= Queries; q++ {
		if text := Text(q, ValidationParams(q)); placeholder.MatchString(text) {
			t.Errorf("Q%d with the validation parameters keeps %s", q, placeholder.FindString(text))
		}
	}
}

func mapsEqual(a, b Params) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMinStreams(t *testing.T) {
	for _, c := range []struct {
		sf   float64
		want int
	}{{0.01, 2}, {1, 2}, {3, 3}, {100, 5}, {1000, 7}, {100000, 11}} {
		if got := MinStreams(c.sf); got != c.want {
			t.Errorf("MinStreams(%g) = %d, want %d", c.sf, got, c.want)
		}
	}
}

// A pyenv shim resolves to the program it stands for; anything else stays.
func TestUnshim(t *testing.T) {
	if got, err := unshim(t.Context(), "/usr/bin/tpchgen-cli"); got != "/usr/bin/tpchgen-cli" || err != nil {
		t.Errorf("a plain path became %s (%v)", got, err)
	}
	shim, err := exec.LookPath("tpchgen-cli")
	if err != nil || filepath.Base(filepath.Dir(shim)) != "shims" {
		t.Skip("tpchgen-cli is not behind a pyenv shim here")
	}
	if got, err := unshim(t.Context(), shim); got == shim || filepath.Base(got) != "tpchgen-cli" || err != nil {
		t.Errorf("the shim %s resolved to %s (%v)", shim, got, err)
	}
}
