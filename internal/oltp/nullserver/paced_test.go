package nullserver_test

import (
	"cmp"
	"math"
	"testing"
	"time"

	"github.com/calibra-bench/calibra/internal/oltp"
)

// Keying and thinking and an open loop run on the polling driver's
// timers, terminals sharing pooled connections too, in procedures and
// client mode: the server counts
// what the client completed, an open loop offers its rate, keying and
// thinking pace the users as the specification's times say, and the
// starts' lateness against their schedule is reported.
func TestPacedRunsOnThePollingDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("paces runs in real time for some 15 s; run without -short")
	}
	for _, c := range []struct {
		name string
		cfg  oltp.RunConfig
		tps  float64 // the throughput expected
	}{
		{"open-loop", oltp.RunConfig{RatePerUser: 200}, 4 * 200},
		// The mix's mean keying and think times, 21 s a transaction, at
		// 1/100: a transaction every 0.21 s a user.
		{"keying", oltp.RunConfig{KeyingThinking: 0.01}, 4 / 0.21},
		// 20 terminals (2 warehouses' worth) on 2 connections.
		{"pooled", oltp.RunConfig{KeyingThinking: 0.01, Users: 20, Connections: 2}, 20 / 0.21},
		{"client-open-loop", oltp.RunConfig{Mode: oltp.ModeClient, RatePerUser: 200}, 4 * 200},
		{"client-pooled", oltp.RunConfig{Mode: oltp.ModeClient, KeyingThinking: 0.01, Users: 20, Connections: 2}, 20 / 0.21},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.Users = max(cfg.Users, 4)
			cfg.Mode = cmp.Or(cfg.Mode, oltp.ModeProcedures)
			cfg.Rampup, cfg.Duration, cfg.Seed, cfg.DriverThreads = 500*time.Millisecond, 3*time.Second, 1, 2
			out := nullRun(t, cfg)
			if d := out.Driver; d == nil || d.Model != oltp.DriverPolling || d.Threads != 2 {
				t.Fatalf("driver %+v, want polling on 2 threads", out.Driver)
			}
			if out.TPMDB == nil || math.Abs(*out.TPMDB-out.TPMClient)*out.DurationS/60 > 5 {
				t.Errorf("tpm_db %v, tpm_client %.0f", out.TPMDB, out.TPMClient)
			}
			if lag := out.Driver.StartLagMs; lag == nil || lag.Max < lag.P50 || lag.P50 <= 0 {
				t.Errorf("start lag %+v, want its percentiles", lag)
			}
			if cfg.Connections > 0 && (out.Connections != cfg.Connections || out.QueueMs == nil) {
				t.Errorf("connections %d, queue %+v: want the pool's", out.Connections, out.QueueMs)
			}
			tps := out.TPMClient / 60
			if tps < c.tps*0.6 || tps > c.tps*1.4 {
				t.Errorf("%.1f transactions a second, want about %.1f", tps, c.tps)
			}
			t.Logf("%.1f tps (want about %.1f), art %.3f ms (%s)", tps, c.tps, out.ARTMs, out.LatencyBasis)
		})
	}
}
