package progress

import (
	"bytes"
	"strings"
	"testing"
)

// An interrupted load's bar says how far it got, never 100%; a finished
// one says 100%.
func TestABarSaysHowFarItGot(t *testing.T) {
	for _, c := range []struct {
		mode  string
		tty   bool
		done  int64
		whole bool
	}{
		{Plain, false, 3, false}, {Auto, true, 3, false},
		{Plain, false, 10, true}, {Auto, true, 10, true},
	} {
		var out bytes.Buffer
		bar := New(&out, c.mode, c.tty).Bar(10, "load", "rows")
		bar.Add(c.done)
		bar.Finish()
		if got := strings.Contains(out.String(), "100%"); got != c.whole {
			t.Errorf("%s (tty %v), %d of 10 done: says 100%% %v, want %v:\n%q", c.mode, c.tty, c.done, got, c.whole, out.String())
		}
	}
}
