package dss

import (
	"context"
	"io"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Dialects are the engines' parts of the dss workload; each registers
// from its own package (dsspg for PostgreSQL).
var Dialects = engine.NewDialects[Dialect]("the dss workload")

// Dialect is what the workload needs of an engine beyond the standard SQL
// it keeps itself (the tables, keys, queries and build record).
type Dialect interface {
	// Connect opens a session working in the workload's schema (Schema on
	// PostgreSQL, a database of its own on MariaDB), named for the
	// observers; dop of 0 or more is the degree of parallelism of each
	// query, below 0 the server's setting stays. A dop the engine cannot
	// honour is an input error. Its sessions quote identifiers with '"'.
	Connect(ctx context.Context, dop int) (Conn, error)
	// FinishLoad follows the bulk load: the keys and indexes of ddl, then
	// the tables' statistics, each spread over the sessions (from
	// Connect), then the schema's bytes on disk; phase announces each part.
	FinishLoad(ctx context.Context, conns []Conn, ddl []string, phase func(string)) (LoadTail, error)
	// Query is query q's text as the engine runs it, from the reference
	// text Text gives (PostgreSQL's dialect of the specification's).
	Query(q int, text string) string
	// TimedOut says whether err is a statement that Conn.SetTimeout's
	// bound stopped.
	TimedOut(err error) bool
}

// LoadTail is what FinishLoad took and measured.
type LoadTail struct {
	IndexS, AnalyzeS float64
	Bytes            int64 // the schema's tables with their indexes
}

// Conn is one session of a dialect, working in the workload's schema.
type Conn interface {
	Close()
	// Exec runs one statement and returns the rows it changed.
	Exec(ctx context.Context, sql string) (int64, error)
	// Rows runs a query and hands each row's values, as text, to each as
	// they come, keeping none.
	Rows(ctx context.Context, sql string, each func([][]byte)) error
	// HasTable says whether the schema holds table.
	HasTable(ctx context.Context, table string) (bool, error)
	// ResetSchema drops the schema with everything in it and creates it
	// empty.
	ResetSchema(ctx context.Context) error
	// Load bulk-loads rows in dbgen's .tbl format ("a|b|c|\n") into table
	// and returns the rows loaded.
	Load(ctx context.Context, table string, tbl io.Reader) (int64, error)
	// Parallelism is the server settings that make the degree of
	// parallelism, as the server shows them, recorded with every run.
	Parallelism(ctx context.Context) (map[string]string, error)
	// SetTimeout bounds each statement that follows; 0 lifts the bound.
	SetTimeout(ctx context.Context, d time.Duration) error
	// RF1 inserts, in one transaction, a copy of each of the n oldest
	// orders that have none, under its key plus shift, with copies of its
	// lines; it returns the rows inserted.
	RF1(ctx context.Context, shift, n int64) (int64, error)
	// DeleteCopied deletes, in one transaction, the n oldest orders that
	// have a copy (every one when n is 0) and their lines; it returns the
	// lines deleted.
	DeleteCopied(ctx context.Context, shift, n int64) (int64, error)
}
