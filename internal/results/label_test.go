package results

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
)

// A label is refused when the run directory's name could not hold it,
// counted as that name holds it: runs of other characters shrink to one
// '-'.
func TestCheckLabel(t *testing.T) {
	for _, c := range []struct {
		label string
		ok    bool
	}{
		{"", true},
		{"pg18-worker", true},
		{strings.Repeat("a", MaxLabel), true},
		{strings.Repeat("a", MaxLabel+1), false},
		{strings.Repeat("a", 5000), false},
		{strings.Repeat("é", 1000), true}, // one '-'
		{strings.Repeat("a ", MaxLabel/2) + "a", false},
		{strings.Repeat("a ", MaxLabel/2), true},
	} {
		err := CheckLabel("--label", c.label)
		if c.ok != (err == nil) {
			t.Errorf("a label of %d bytes: %v, want ok %v", len(c.label), err, c.ok)
		}
		if err != nil && (fault.Code(err) != fault.ExitInput || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--label is")) {
			t.Errorf("a label of %d bytes: %q is not one input sentence naming --label", len(c.label), err)
		}
	}
	// The longest label leaves room in a name for the time, "-merged" and
	// a "-NN" suffix.
	if n := len("20060102T150405Z_") + MaxLabel + len("-merged") + len("-99999"); n > 255 {
		t.Errorf("a run directory's name may be %d bytes, past NAME_MAX", n)
	}
}
