package postgres

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/engine/server"
)

// A failed start's sentence quotes why the server failed, not its answers
// to calibra's readiness probes, which fill the log while it recovers.
func TestLastWordsAreTheServersReason(t *testing.T) {
	var tail server.Tail
	for _, l := range []string{
		"LOG:  database system was interrupted; last known up at 2026-11-28 18:19:30 UTC",
		"FATAL:  the database system is starting up",
		"LOG:  redo starts at 0/1A2B3C4",
		"FATAL:  the database system is not yet accepting connections",
		"FATAL:  the database system is not yet accepting connections",
		"FATAL:  invalid page in block 984 of relation base/16384/16428",
		"LOG:  startup process (PID 18799) exited with exit code 1",
	} {
		tail.Write([]byte("2026-11-28 18:19:45.907 UTC [18891] " + l + "\n"))
	}
	if got, want := tail.Matching(serverError), "2026-11-28 18:19:45.907 UTC [18891] FATAL:  invalid page in block 984 of relation base/16384/16428"; got != want {
		t.Errorf("last words %q, want %q", got, want)
	}
}
