package runner

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/study"
)

// --db-cache is read in the chosen engine's own units, and refused with
// its own minimum: MariaDB's 8G is a size, a bare number is bytes there
// and 8 kB buffers on PostgreSQL.
func TestDBCacheInTheEnginesOwnUnits(t *testing.T) {
	for _, c := range []struct {
		engine, size string
		bytes        uint64
		problem      string
	}{
		{"mariadb", "8G", 8 << 30, ""},
		{"mariadb", "256M", 256 << 20, ""},
		{"mariadb", "1GB", 1 << 30, ""},
		{"mariadb", "4194304", 4 << 20, ""},
		{"mariadb", "1048576", 0, "below MariaDB's minimum of 2MB"},
		{"mariadb", "lots", 0, `"lots" is not a memory size`},
		{"postgresql", "8GB", 8 << 30, ""},
		{"postgresql", "1024", 8 << 20, ""},
		{"postgresql", "8G", 0, `"8G" is not a memory size`},
		{"postgresql", "0", 0, "below PostgreSQL's minimum of 128kB"},
	} {
		got, err := engine.ParseCache(c.engine, c.size)
		switch {
		case c.problem == "" && (err != nil || got != c.bytes):
			t.Errorf("%s --db-cache %s = %d, %v; want %d", c.engine, c.size, got, err, c.bytes)
		case c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)):
			t.Errorf("%s --db-cache %s: %v; want %q", c.engine, c.size, err, c.problem)
		}
	}
}

// The whole check takes --engine mariadb --db-cache 8G (on a machine with
// more than 8 GiB; else the one problem is the machine's memory).
func TestMariaDBTakesItsOwnCacheSize(t *testing.T) {
	c := Config{Target: study.Target{Engine: "mariadb", DBCache: "8G", Path: t.TempDir()}, Progress: "auto"}
	var p Problems
	c.Validate(&p)
	for _, err := range p {
		if !strings.Contains(err.Error(), "more than this machine's") {
			t.Errorf("--engine mariadb --db-cache 8G: %v", err)
		}
	}
}
