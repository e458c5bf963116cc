package observepg

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

// The wait events whose latency the counters give; PostgreSQL 17 renamed
// them in CamelCase.
func TestWaitLatency(t *testing.T) {
	read, client, write, sync := 0.5, 0.25, 0.125, 2.0
	db := &results.ObserveDB{DataFileReadAvgMs: &read, WALWriteAvgMs: &write, WALSyncAvgMs: &sync}
	var src source
	for _, c := range []struct {
		key  observe.WaitKey
		want *float64
	}{
		{observe.WaitKey{Class: "IO", Event: "DataFileRead"}, &read},
		{observe.WaitKey{Class: "IO", Event: "WALWrite"}, &write},
		{observe.WaitKey{Class: "IO", Event: "WalSync"}, &sync},
		{observe.WaitKey{Class: "IO", Event: "DataFileWrite"}, nil},
		{observe.WaitKey{Class: "LWLock", Event: "WALWrite"}, nil},
	} {
		if got := src.WaitLatency(c.key, db); got != c.want {
			t.Errorf("%v: %v, want %v", c.key, got, c.want)
		}
	}
	db.ClientReadAvgMs = &client
	if got := src.WaitLatency(observe.WaitKey{Class: "IO", Event: "DataFileRead"}, db); got != &client {
		t.Errorf("with pg_stat_io's client reads: %v, want them", got)
	}
}
