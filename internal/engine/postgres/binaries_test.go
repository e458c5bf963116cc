package postgres

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// A fix names the binaries' option only to an engine that has one: an
// engine wrapping this package without --pg-bin is never told to give it.
func TestBinariesFixesNameTheEnginesOwnOption(t *testing.T) {
	for _, c := range []struct {
		flag, want, absent string
	}{
		{binFlag, "or give --pg-bin DIR", ""},
		{"", "install it", "--"},
	} {
		_, err := findBinaries("99", c.flag)
		if err == nil || !strings.Contains(err.Error(), c.want) || c.absent != "" && strings.Contains(err.Error(), c.absent) {
			t.Errorf("PostgreSQL 99 with the option %q: %v; want %q and not %q", c.flag, err, c.want, c.absent)
		}
	}
}

// --pg-bin (and a study's target.pg_bin) naming binaries another account
// could change is refused in one sentence naming the option, before any
// of them runs.
func TestAnotherAccountsBinariesAreRefused(t *testing.T) {
	for _, trap := range testenv.TrapDirs(t, "postgres (PostgreSQL) 15.1", programs...) {
		t.Run(trap.Case, func(t *testing.T) {
			_, err := FindBinaries(trap.Path)
			if fault.Code(err) != fault.ExitInput || !strings.HasPrefix(err.Error(), "--pg-bin "+trap.Path+": ") {
				t.Errorf("got %v; want one sentence naming --pg-bin %s", err, trap.Path)
			}
			if trap.Ran() {
				t.Error("a program ran")
			}
		})
	}
}
