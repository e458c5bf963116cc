//go:build integration

package oltppg

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/progress"
)

// BenchmarkPollingThreads runs procedures mode against a throwaway
// PostgreSQL (one warehouse, 8 users, 6 s windows) on 1 and then 2
// polling threads in each iteration, so both see the same load of the
// machine, and reports the driver's CPU a transaction and the throughput
// of each: go test -tags integration ./internal/oltp/oltppg -run XXX -bench PollingThreads
// -benchtime 4x.
func BenchmarkPollingThreads(b *testing.B) {
	target, _ := builtTarget(b)
	var cpu, tps [2]float64
	for b.Loop() {
		for i, k := range []int{1, 2} {
			cfg := oltp.RunConfig{Users: 8, Mode: oltp.ModeProcedures, Rampup: time.Second, Duration: 6 * time.Second, Seed: 3, DriverThreads: k}
			o, _, err := oltp.Run(context.Background(), target, cfg, progress.New(io.Discard, progress.None, false))
			if err != nil {
				b.Fatal(err)
			}
			cpu[i] += o.Driver.CPUUsPerTxn
			tps[i] += o.TPMClient / 60
			b.Logf("%d thread(s): %.1f µs a transaction, %.0f a second", k, o.Driver.CPUUsPerTxn, o.TPMClient/60)
		}
	}
	n := float64(b.N)
	b.ReportMetric(cpu[0]/n, "cpu-µs/txn-1thread")
	b.ReportMetric(cpu[1]/n, "cpu-µs/txn-2threads")
	b.ReportMetric(tps[0]/n, "txn/s-1thread")
	b.ReportMetric(tps[1]/n, "txn/s-2threads")
}
