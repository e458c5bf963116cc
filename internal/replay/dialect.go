package replay

import (
	"context"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Dialects are the engines' commit paths for the replay; each registers
// from its own package (replaypg for PostgreSQL). The reads are iocal's.
var Dialects = engine.NewDialects[Dialect]("the profile replay")

// Schema holds the replay's commit table and routines.
const Schema = "calibra_replay"

// Dialect opens the replay's committers.
type Dialect interface {
	Connect(ctx context.Context) (Conn, error)
	// Method says, for results.json, how a commit reaches the storage.
	Method() string
}

// Conn is one committer's session.
type Conn interface {
	// Prepare creates (anew) the paced loop Commits calls, and the pool of
	// random bytes the payloads are cut from where the server keeps one
	// for every session.
	Prepare(ctx context.Context) error
	// Commits has the server make n commits on a schedule, the i-th due at
	// start + i*every (it waits for a commit not yet due, and starts a late
	// one at once: an open loop), each writing width random
	// bytes to the WAL (redo log) and committed synchronously. It returns each commit's latency
	// from its due time to its COMMIT's return, as the server timed it.
	Commits(ctx context.Context, committer int, first int64, n int, start time.Time, every time.Duration, width int) ([]time.Duration, error)
	// Drop removes the schema.
	Drop(ctx context.Context) error
	Close()
}
