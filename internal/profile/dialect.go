package profile

import (
	"context"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Dialects are the engines' parts of a capture (and of the replay's own
// measurement, which reads the same counters); each registers from its own
// package (profilepg for PostgreSQL).
var Dialects = engine.NewDialects[Dialect]("calibra profile")

// Dialect reads an engine's own counters, read-only.
type Dialect interface {
	// CheckGrants verifies, before anything is sampled, that the role may
	// read every counter a capture needs; a fault.Input naming the GRANT
	// that fixes it when not.
	CheckGrants(ctx context.Context) error
	Connect(ctx context.Context) (Conn, error)
}

// Conn is one session reading the server's counters.
type Conn interface {
	// Counters reads the server's cumulative counters now.
	Counters(ctx context.Context) (Counters, error)
	// Active counts the sessions of the observed database working now
	// (not idle, not this one).
	Active(ctx context.Context) (int, error)
	// Server is what the capture records of the server as it is.
	Server(ctx context.Context) (Server, error)
	Close()
}

// Counters are cumulative counts; nil where the server does not count it,
// with the reason in Missing.
type Counters struct {
	Commits *int64
	// PageReads are the data pages read from the OS, PageHits those found
	// in the database's cache.
	PageReads, PageHits *int64
	// PageWrites are the data pages written by every process
	// (checkpoints, background writers, sessions).
	PageWrites *int64
	WALBytes   *int64
	WALSyncs   *int64
	// SeqReads are the data-page reads made in bulk (sequential scans,
	// read-ahead), of IOReads, every data-page read the same view counts.
	SeqReads, IOReads *int64
	Missing           map[string]string
}

// Server is the server's version, page size, the observed database's
// size and the cache in force.
type Server struct {
	Version    string
	PageBytes  int
	DataBytes  int64
	CacheBytes int64
}
