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
	// Prepare creates (anew) the replay's schema: what the commits write,
	// and, where the server paces them, the loop Commits calls and the
	// pool of random bytes it cuts payloads from.
	Prepare(ctx context.Context) error
	// Commits makes n commits on a schedule, the i-th due at start +
	// i*every (a commit not yet due waits, a late one starts at once: an
	// open loop), each writing width random bytes to the WAL (redo log)
	// and committed synchronously, paced by the server (PostgreSQL) or by
	// calibra (MariaDB). It returns each commit's latency from its due
	// time to its commit's return.
	Commits(ctx context.Context, committer int, first int64, n int, start time.Time, every time.Duration, width int) ([]time.Duration, error)
	// Drop removes the schema.
	Drop(ctx context.Context) error
	Close()
}
