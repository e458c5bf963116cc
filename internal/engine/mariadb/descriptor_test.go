package mariadb

import (
	"errors"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
)

// --galera's bounds, checked before anything runs: no flag is one
// server; 0 (a cluster of no node), a negative count, more nodes than one
// machine runs, or no number is refused in one sentence (exit 2), as is
// a cluster beside --dsn or --instances.
func TestGaleraBounds(t *testing.T) {
	for _, c := range []struct {
		value     string
		dsn       string
		instances int
		want      string // "" accepted
	}{
		{value: "", instances: 1},
		{value: "0", instances: 1, want: "--galera 0 is not a number of nodes calibra runs on one machine; give 1 to 9 nodes"},
		{value: "-1", instances: 1, want: "--galera -1 is not a number of nodes"},
		{value: "10", instances: 1, want: "--galera 10 is not a number of nodes"},
		{value: "two", instances: 1, want: "--galera two is not a number of nodes"},
		{value: "2", dsn: "mysql://bench@127.0.0.1:1/bench", instances: 1, want: "cannot run on a --dsn server"},
		{value: "2", instances: 2, want: "--galera's nodes share one database"},
	} {
		err := checkGalera(engine.Config{DSN: c.dsn, Options: map[string]string{galeraFlag: c.value}}, c.instances)
		var in *fault.InputError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--galera %q: %v, want it accepted", c.value, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &in) || strings.Count(err.Error(), "\n") > 0):
			t.Errorf("--galera %q: %v, want one input sentence with %q", c.value, err, c.want)
		}
	}
}

// The redo log is as large as the buffer pool, within MariaDB's default
// and 1 GiB.
func TestRedoLogSize(t *testing.T) {
	for pool, want := range map[int64]int64{
		2 << 20: 96 << 20, 64 << 20: 96 << 20, 256 << 20: 256 << 20, 1 << 30: 1 << 30, 8 << 30: 1 << 30,
	} {
		if got := redoLogSize(pool); got != want {
			t.Errorf("redoLogSize(%d) = %d, want %d", pool, got, want)
		}
	}
}
