package runner

import (
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/study"
)

// The bounds of every flag and study key, checked with the rest of a
// step's input before anything is created (docs/security.md, "Inputs"). A
// value past them is a typo or a unit slip, not a measurement: a run of a
// century, a million loaders, a queue depth no device has.
const (
	// MaxWindow bounds every duration a run waits through: timed windows,
	// warm-ups, ramps, loads and timeouts.
	MaxWindow = 7 * 24 * time.Hour
	// MaxLatency bounds a latency target (--max-latency, --sla).
	MaxLatency = time.Hour
	// MaxUsers bounds the virtual users (terminals) of a load.
	MaxUsers = 100_000
	// MaxWorkers bounds what runs in parallel inside calibra: loaders,
	// load workers, fio workers, streams, audit clients.
	MaxWorkers = 1024
	// MaxRepeat bounds repeats of a step and the audit's cycles.
	MaxRepeat = study.MaxRepeat
	// MaxRatePerUser bounds an open loop's transactions a second per user.
	MaxRatePerUser = 10_000
	// MaxKeying bounds the keying and think times' scale.
	MaxKeying = 100
	// MinSF and MaxSF bound the TPC-H-like scale factor: below 0.01 some
	// tables hold no row, above 100000 is past the specification's range.
	MinSF, MaxSF = 0.01, 100_000
	// MaxManagedConns bounds the connections a managed server is started
	// for (max_connections): PostgreSQL forks a process a connection, and
	// a server asked for more fails at its start, after initdb.
	MaxManagedConns = 10_000
	// MaxDriverThreads bounds the polling driver's threads: far more than
	// any machine's cores.
	MaxDriverThreads = 1024
	// MaxQD bounds a device queue depth (Linux's nr_requests tops at 4096
	// for most schedulers; io_uring rings at 32768).
	MaxQD = 4096
	// MaxSteadyRounds bounds a device point's steady-state rounds (the
	// PTS stops at 25).
	MaxSteadyRounds = 1000
)

// days writes a bound for people: "7 days", "1 hour".
func days(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0 && d > 24*time.Hour:
		return fmt.Sprintf("%d days (%dh)", d/(24*time.Hour), d/time.Hour)
	case d == time.Hour:
		return "1 hour (1h)"
	}
	return d.String()
}

// longest adds a problem when the duration flag is past most.
func (p *Problems) longest(flag string, d, most time.Duration) {
	if d > most {
		p.Add(fmt.Sprintf("%s must be at most %s", flag, days(most)), "%s %s is too long", flag, d)
	}
}

// most adds a problem when the count flag is past most.
func (p *Problems) most(flag string, n, most int) {
	if n > most {
		p.Add(fmt.Sprintf("%s must be at most %d", flag, most), "%s %d is too many", flag, n)
	}
}

// managedConns adds a problem when a managed server would be started for
// more connections than MaxManagedConns; what names the flag asking them.
func (p *Problems) managedConns(c *Config, conns int, what string) {
	if c.DSN == "" && conns > MaxManagedConns {
		p.Add(fmt.Sprintf("serve the users on fewer connections with --connections, or give fewer; the managed server takes at most %d", MaxManagedConns),
			"%s needs %d connections to the managed server", what, conns)
	}
}
