package postgres

import (
	"strings"
	"testing"
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
