package oltp

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

// Dialects holds each engine's side of the workload; a dialect package
// (oltppg) registers its own, so this package names no engine.
var Dialects = engine.NewDialects[Dialect]("the oltp workload")

// Dialect is an engine's side of the workload: the schema, the bulk load
// and the transactions in its SQL, the counters at the window's edges.
// The workload draws every input and generates every row; a dialect only
// carries them to its server.
type Dialect interface {
	// Connect opens a control session on the schema: build records,
	// counters, checks.
	Connect(ctx context.Context) (Control, error)
	// Session opens one user's connection, ready to run the five
	// transactions as mode says.
	Session(ctx context.Context, mode Mode) (Session, error)
	// Loader opens n sessions for a parallel bulk load.
	Loader(ctx context.Context, n int) (Loader, error)
	// Templates keeps the loaded database for fast resets; nil when the
	// engine keeps none (a server calibra does not manage).
	Templates() engine.Resetter
}

// Control is a session on the schema for everything but the timed
// transactions.
type Control interface {
	// BuildInfo is the build record's keys and values; nil when there is
	// no schema or no record.
	BuildInfo(ctx context.Context) (map[string]string, error)
	// CreateSchema drops whatever schema is there and creates it anew:
	// tables without the keys and indexes Loader.Finish adds (an engine
	// that stores rows in key order keeps its primary keys), and the
	// procedures of ModeProcedures.
	CreateSchema(ctx context.Context) error
	// RecordBuild adds keys and values to the build record.
	RecordBuild(ctx context.Context, info map[string]string) error
	// Ints runs query, whose columns are all integers, and returns its
	// rows: the consistency conditions and the power-loss audit's reads,
	// written once in check.go and audit.go.
	Ints(ctx context.Context, query string) ([][]int64, error)
	// StatsFlush says whether the server's transaction counters must be
	// flushed at the window's edges (Counters' flush, Session.FlushStats:
	// each a transaction the workload subtracts); note, when not empty,
	// tells the results how far those counters are then uncertain.
	StatsFlush(ctx context.Context) (flush bool, note string, err error)
	// Counters reads the window-edge counters in one statement; flush
	// publishes the session's own statistics before and after the read,
	// so both fall on the near side of a window's start.
	Counters(ctx context.Context, flush bool) (Counters, error)

	// Checkpoint makes the data on the storage current (the audit's start).
	Checkpoint(ctx context.Context) error
	Close()
}

// District and Customer key the audit's counts.
type (
	District struct{ W, D int }
	Customer struct{ W, D, C int }
)

// Session runs the five transactions on one connection. A New-Order that
// rolls back on its unused item returns ErrRolledBack.
type Session interface {
	NewOrder(ctx context.Context, in *NewOrderInput) error
	Payment(ctx context.Context, in *PaymentInput) error
	OrderStatus(ctx context.Context, in *OrderStatusInput) error
	Delivery(ctx context.Context, in *DeliveryInput) error
	StockLevel(ctx context.Context, in *StockLevelInput) error
	// FlushStats makes the server publish the session's statistics now
	// (see Control.StatsFlush).
	FlushStats(ctx context.Context) error
	// ErrorClass names a failed transaction's kind for the results (the
	// SQL state), or "connection" when no server error came back.
	ErrorClass(err error) string
	// Fault is a failure no later transaction outlives (storage refused,
	// server gone), in words for the user; nil for any other error.
	Fault(err error) error
	// Closed says whether the connection is gone.
	Closed() bool
	Close()
}

// RawSession is a Session whose transactions a polling loop can drive on
// the connection's socket with raw system calls, one thread for every
// user (poll.go): each transaction's requests as bytes, one a round trip,
// its answers parsed from bytes. Between the loop's calls the Session's methods are not
// used, and the loop leaves the connection between answers.
type RawSession interface {
	Session
	// FD is the connection's socket, non-blocking.
	FD() (int, error)
	// AppendCall appends the request of transaction t on in (the user's
	// input of that type, as draw gives it).
	AppendCall(buf []byte, t TxType, in any) []byte
	// AppendFlushStats appends the request of Session.FlushStats.
	AppendFlushStats(buf []byte) []byte
	// Answer reads one whole answer from the front of buf: the bytes it
	// took (0 while the answer is incomplete). A transaction of several
	// round trips goes on: Answer appends its next request to next and
	// returns it. Once it ended, req is empty and err the outcome and out
	// values the Session's method would give (ErrRolledBack and all); in
	// is nil for a flush's answer.
	Answer(buf []byte, t TxType, in any, next []byte) (used int, req []byte, err error)
}

// Unpolled is a Session whose mode the polling driver runs, but not on
// its connection: Unpolled says why the users run a goroutine each
// (results.driver's reason), "" when nothing stops the polling driver.
type Unpolled interface {
	Unpolled() string
}

// Retrier is a Session that retries a transaction itself on some
// failures (a Galera node's conflicts): Retried is how often the last one
// was, and the failure's class; the window's retries go to the results.
type Retrier interface {
	Retried() (class string, n int)
}

// Batch is one batch of generated rows, the unit of a parallel load.
type Batch struct {
	Table tpcc.Table
	N     int // the batch's number in its table
	Rows  int
}

// Loader bulk-loads the generated rows on its sessions.
type Loader interface {
	// Load sinks every batch, in order, each on the first free session
	// (or, where the engine loads faster so, each table's batches on one
	// session in one transaction, the tables in the order of their first
	// batches): fill appends the batch's rows, in the Format its table
	// takes, to that session's buffer. It returns once every row is
	// stored; a dialect may already have begun what Finish waits for.
	Load(ctx context.Context, batches []Batch, fill func(buf []byte, b Batch) []byte) error
	// Format is the form the loader sends table t's rows in.
	Format(t tpcc.Table) tpcc.Format
	// Finish adds keys and indexes and makes the planner's statistics,
	// spread over the sessions, then sizes the schema; phase announces
	// each part, whose time (IndexS, VacuumS) is what it added after the
	// load.
	Finish(ctx context.Context, phase func(string)) (LoadTail, error)
	Close()
}

// LoadTail is what follows a bulk load and how long each part took.
type LoadTail struct {
	IndexS, VacuumS float64
	Bytes           int64 // the schema's tables with their indexes
}

// Counters are the server-side figures read at a window edge.
type Counters struct {
	SumNextOID  int64 // sum(d_next_o_id) over all districts
	Xacts       int64 // commits plus rollbacks in the database
	Checkpoints int64 // checkpoints the server completed (timed + requested)
	// NoCheckpoints, when not empty, says why the server cannot count its
	// checkpoints; Checkpoints then means nothing.
	NoCheckpoints string
	// CountsAutovacuum says the server counts its autovacuum's
	// transactions in Xacts (PostgreSQL): Autovacuum is then the vacuums
	// and analyses autovacuum finished on the database's tables,
	// AutovacuumTables the same by table (those with any), and
	// AutovacuumBusy its workers at work there at the read.
	CountsAutovacuum           bool
	Autovacuum, AutovacuumBusy int64
	AutovacuumTables           map[int64]TableAutovacuum
}

// TableAutovacuum is what autovacuum finished on one table: vacuums and
// analyses.
type TableAutovacuum struct{ Vacuums, Analyses int64 }

// autovacuumIn is autovacuum's work in the window between c0 and c1: the
// tables it finished, and each worker found busy at an edge.
func autovacuumIn(c0, c1 Counters) int64 {
	return c1.Autovacuum - c0.Autovacuum + c0.AutovacuumBusy + c1.AutovacuumBusy
}

// AutovacuumXacts is the transactions a server that counts autovacuum's
// with calibra's (PostgreSQL) counted for it between c0 and c1, to take
// out of tpm_db. Measured on PostgreSQL 15 and 18: a worker's visit to
// the database commits 2 (its connection and its table list), each table
// it takes 1 more and each vacuum or analysis of it 1 more, and the worker
// publishes all of them when it exits, while each vacuum or analysis
// counts on its table as it ends. So with no worker at work at either
// edge, every worker that finished a table in the window also exited in
// it: one visit (2), each table once (a table both vacuumed and analysed
// in one visit is taken once: the larger of its two counts), and the
// actions. A second visit in the window, or a table vacuumed in one and
// analysed in another, adds 2 or 1 this does not see, as does a visit
// that found nothing to do (2, and no count moves). With a worker at work
// at an edge, what it publishes at its exit cannot be placed: ok is false.
func AutovacuumXacts(c0, c1 Counters) (n int64, ok bool) {
	if !c1.CountsAutovacuum {
		return 0, true
	}
	if c0.AutovacuumBusy+c1.AutovacuumBusy > 0 {
		return 0, false
	}
	for rel, t1 := range c1.AutovacuumTables {
		t0 := c0.AutovacuumTables[rel]
		v, a := t1.Vacuums-t0.Vacuums, t1.Analyses-t0.Analyses
		n += max(v, a) + v + a
	}
	if n > 0 {
		n += 2
	}
	return n, true
}

// Mode is how the transactions reach the server.
type Mode string

// The implementations of the five transactions. Their numbers are not
// comparable with each other: results always say which ran.
const (
	ModeProcedures Mode = "procedures" // one stored-procedure call per transaction, as HammerDB
	// ModeClient drives the transactions from the client in few round
	// trips: statements pipelined and set-oriented where the data allows.
	ModeClient Mode = "client"
	// ModeClientSimple is one prepared statement per round trip, as go-tpc
	// and BenchBase drive them.
	ModeClientSimple Mode = "client-simple"
)

// Modes lists every mode, in the order help names them.
var Modes = []Mode{ModeProcedures, ModeClient, ModeClientSimple}

// modeTitle is a mode as a sentence names it.
var modeTitle = map[Mode]string{ModeProcedures: "stored-procedure", ModeClient: "pipelined client", ModeClientSimple: "statement-at-a-time client"}

// Supports declares the modes a dialect runs, for its registration.
func Supports(modes ...Mode) []string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return s
}

// CheckMode refuses, before anything starts, a mode the dialect of the
// engine called engineName does not declare.
func CheckMode(engineName string, m Mode) error {
	modes := Dialects.Supports(engineName)
	if len(modes) == 0 || slices.Contains(modes, string(m)) {
		return nil // no dialect: Dialects.For says so when the run opens it
	}
	return fault.Input("use --mode "+strings.Join(modes, " or "), "%s has no %s mode (--mode %s)", engine.Title(engineName), modeTitle[m], m)
}

// ErrRolledBack is the New-Order that rolled back on its unused item, as
// the specification requires of 1% of them (clause 2.4.2.3): an outcome,
// not an error; nothing was committed.
var ErrRolledBack = errors.New("new-order rolled back on an unused item (expected)")
