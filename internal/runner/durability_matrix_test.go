package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/results"
)

func TestWithTorn(t *testing.T) {
	for spec, want := range map[string]string{
		"hdd":                       "hdd:torn=4096",
		"hdd+flash-cache:size=2G":   "hdd+flash-cache:size=2G,torn=4096",
		"hdd:torn=512,seed=3":       "hdd:torn=512,seed=3,torn=4096",
		"hdd:spindles=2,delay=2ms ": "hdd:spindles=2,delay=2ms ,torn=4096",
	} {
		if got := withTorn(spec, 4096); got != want {
			t.Errorf("withTorn(%q) = %q, want %q", spec, got, want)
		}
	}
}

// The matrix's sentences say, per cut, whether the storage damaged pages
// with the protection off, whether the protection held, and its price.
func TestMatrixFindings(t *testing.T) {
	per := func(v float64) *float64 { return &v }
	cell := func(setting string, unit, damaged, lost, written, acked int64) results.DurabilityCell {
		return results.DurabilityCell{Protection: setting, TornUnit: unit, Cycles: 3, PagesDamaged: damaged, LostAcknowledged: lost,
			WrittenBytes: written, Acknowledged: acked, BytesPerCommit: per(float64(written) / float64(acked))}
	}
	refused := func(c results.DurabilityCell) results.DurabilityCell {
		c.Outcomes = map[string]int{"torn-page": 1}
		c.UnverifiableAcknowledged, c.LostAcknowledged = c.LostAcknowledged, 0
		return c
	}
	cuts := func(c results.DurabilityCell, n int) results.DurabilityCell {
		c.Cycles = n
		return c
	}
	for _, c := range []struct {
		name string
		m    []results.DurabilityCell
		want []string // a part of each sentence, in order
	}{
		{"the expected lab", []results.DurabilityCell{
			cell("full_page_writes=on", 4096, 0, 0, 30<<20, 1000), cell("full_page_writes=on", 16384, 0, 0, 30<<20, 1000),
			cell("full_page_writes=off", 4096, 2, 0, 20<<20, 1000), cell("full_page_writes=off", 16384, 0, 0, 20<<20, 1000)},
			[]string{"Under the torn 4 KiB cut this storage left 2 damaged pages and 0 acknowledged commits lost in 3 cuts with full_page_writes=off: keep full_page_writes on.",
				"Under the atomic 16 KiB cut no page was damaged and no acknowledged commit lost in 3 cuts with full_page_writes=off, too few to tell: damage that comes in 6 of 10 cuts (as a page damage did without the protection on this lab, docs/lab.md) shows in 3 cuts with a chance of 94% only; run --cycles 4 or more to see it at 97%.",
				"30.7 KiB written per acknowledged commit against 20.5 KiB without it (+50%)"}},
		{"a refused recovery", []results.DurabilityCell{
			cell("full_page_writes=on", 4096, 0, 0, 10, 10), refused(cell("full_page_writes=off", 4096, 1, 154, 5, 154))},
			[]string{"left 1 damaged page and 0 acknowledged commits lost in 3 cuts with full_page_writes=off (the server refused to recover or to read its data, so 154 acknowledged commits could not be verified): keep",
				"(+2980%)"}},
		{"the protection did not hold", []results.DurabilityCell{
			cell("innodb_doublewrite=ON", 4096, 1, 0, 10, 10), cell("innodb_doublewrite=ON", 16384, 0, 0, 10, 10),
			cuts(cell("innodb_doublewrite=OFF", 4096, 0, 0, 5, 10), 4), cuts(cell("innodb_doublewrite=OFF", 16384, 0, 0, 5, 10), 5)},
			[]string{"Under the torn 4 KiB cut no page was damaged and no acknowledged commit lost in 4 cuts with innodb_doublewrite=OFF, which would show damage that comes in 6 of 10 cuts with a chance of 97%: innodb_doublewrite did not change the outcome here.", "With innodb_doublewrite=ON under the torn 4 KiB cut it still lost 0 acknowledged commits and damaged 1 page: the protection did not hold.",
				"Under the atomic 16 KiB cut no page was damaged and no acknowledged commit lost in 5 cuts with innodb_doublewrite=OFF, which would show damage that comes in 6 of 10 cuts with a chance of 99%", "(+100%)"}},
	} {
		got := matrixFindings(c.m)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d sentences, want %d: %q", c.name, len(got), len(c.want), got)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: sentence %d %q does not say %q", c.name, i, got[i], w)
			}
		}
	}
}
