package iocal

import (
	"context"
	"io"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
)

// Dialects are the engines' parts of the calibration; each registers from
// its own package (iocalpg for PostgreSQL).
var Dialects = engine.NewDialects[Dialect]("the iocal calibration")

// Dialect is how an engine reads and writes single blocks and block
// ranges of a table: the calibration's own logic (data sizes, sweeps,
// verdicts) stays in this package.
type Dialect interface {
	// Connect opens one job's session; no parallel workers may join its
	// scans.
	Connect(ctx context.Context) (Conn, error)
	// CheckRights verifies that the role of a server calibra does not
	// manage may create Schema, or owns it already.
	CheckRights(ctx context.Context) error
	// Methods say, for results.json, how each test reaches the storage
	// through the engine.
	Methods() Methods
}

// Methods are the engine's ways of each test, in words for results.json.
type Methods struct {
	Random, ClientRead, SeqRead, SeqWrite, Commit string
}

// Chunk is one call of the write test: rows First..First+N-1 of Table,
// each an id and a filler of Width bytes, one block's row (as Load's),
// appended to the rows before unless Create (the table is new) or Empty
// (it is emptied first).
type Chunk struct {
	Table         string
	Create, Empty bool
	First, N      int64
	Width         int
}

// IOMethoder is a Conn whose server chooses how it issues its data-file
// reads (PostgreSQL 18's io_method), recorded with the calibration.
type IOMethoder interface {
	// IOMethod is the method in force; "" where the server has none.
	IOMethod(ctx context.Context) (string, error)
}

// Conn is one session. Tables are named schema-qualified.
type Conn interface {
	Close()
	// Server is the engine's block size, and why a session cannot publish
	// its statistics on demand ("" when it can: see Flush).
	Server(ctx context.Context) (blockSize int, noFlush string, err error)
	// ResetSchema drops Schema with everything in it and creates it empty.
	ResetSchema(ctx context.Context) error
	// DropSchema drops Schema with everything in it, if it exists.
	DropSchema(ctx context.Context) error
	// DropTables drops Schema's tables, and its routines, whose names
	// start with prefix.
	DropTables(ctx context.Context, prefix string) error
	// DropTable drops a table if it exists.
	DropTable(ctx context.Context, table string) error
	// Load creates table and loads rows, each an id and a filler of one
	// block, tab-separated, one to a line, all in one transaction, so
	// that reading them later changes no block.
	Load(ctx context.Context, table string, rows io.Reader) error
	// PrepareWrites creates (anew) pool, a table of random bytes the
	// write test's rows take their fillers from in the server, and the
	// engine's routine that writes them, named after pool so that
	// DropTables drops both with it.
	PrepareWrites(ctx context.Context, pool string) error
	// WriteRows has the server write the chunk's rows into its table
	// (created first, or emptied first, where the chunk says), each of
	// one block with a filler cut from pool, all generated in the server,
	// in one transaction committed synchronously: nothing the client does
	// is on the write path, and N blocks are written. It fails when the
	// server wrote other than the chunk's rows.
	WriteRows(ctx context.Context, pool string, c Chunk) error
	// Checkpoint writes every changed block to the storage.
	Checkpoint(ctx context.Context) error
	// SaveMeta records what the data is, for a later run to reuse it;
	// Meta reads it back, with an error when there is none.
	SaveMeta(ctx context.Context, sizeBytes int64, tables int) error
	Meta(ctx context.Context) (sizeBytes int64, tables int, err error)
	// Blocks is a table's blocks up to the last that holds a row.
	Blocks(ctx context.Context, table string, blockSize int) (int64, error)
	// ReadBlock reads the row of block b of table: one block read.
	ReadBlock(ctx context.Context, table string, b int64) error
	// ReadRandom has the server read the rows of blocks of table, in one
	// call, and returns the rows it found: one block read each.
	ReadRandom(ctx context.Context, table string, blocks []int64) (rows int64, err error)
	// PrepareCommits creates (anew) table, where committers append, and
	// the server-side loop Commits calls where the engine has one, named
	// after table so that DropTables drops it with the table.
	PrepareCommits(ctx context.Context, table string) error
	// Commits has the server commit up to n tiny transactions one after
	// another, for at most within, each appending a row (committer,
	// first+i) to table and committed synchronously (the WAL, or redo
	// log, written and flushed). It returns each commit's latency as the
	// server timed it, from the start of its INSERT until its COMMIT
	// returned.
	Commits(ctx context.Context, table string, committer int, first int64, n int, within time.Duration) ([]time.Duration, error)
	// ReadBlocks reads blocks [from, to) of table in order.
	ReadBlocks(ctx context.Context, table string, from, to int64) error
	// Flush publishes the session's statistics now.
	Flush(ctx context.Context) error
}
