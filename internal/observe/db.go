package observe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

// The database side of the Sampler. Each engine's dialect (observepg for
// PostgreSQL) reads its server's counters and wait events; the Sampler
// keeps the connection across restarts and turns readings into windows.

// Dialects holds each engine's database sampler, registered from the
// dialect's own package.
var Dialects = engine.NewDialects[DBSource]("the database observer")

// DBSource is an engine's database sampler, not yet connected.
type DBSource interface {
	// Open makes the sampler's first connection, outside the measured
	// database where it can, and fixes from the server's version and
	// settings what it reads. proc is the procfs root, where a local
	// server's process is looked for.
	Open(ctx context.Context, proc string) (DBConn, DBInfo, error)
	// Connect opens another connection like Open's, after an error or a
	// restart closed the last one.
	Connect(ctx context.Context) (DBConn, error)
	// WaitLatency is the mean latency of one wait of key where db's
	// counters give it, else nil.
	WaitLatency(key WaitKey, db *results.ObserveDB) *float64
}

// DBConn is one connection of the sampler, used by one goroutine at a
// time.
type DBConn interface {
	// Counters reads the server's cumulative counters now.
	Counters(ctx context.Context) (DBCounters, error)
	// Waits counts the observed database's active sessions, but the
	// sampler's own, per wait event now.
	Waits(ctx context.Context) ([]WaitCount, error)
	Close()
}

// DBInfo is what an opened source observes, and cannot, for the whole run.
type DBInfo struct {
	Database string // whose sessions and counters are observed
	WaitView string // what the wait polls read, for the sentences of missing
	// Limits names each metric (a results key, e.g. db.client_reads) the
	// server cannot give at all, with the reason; ObserversInside is a
	// caveat on them all.
	Limits map[string]string
	// ServerPID is the server's main process when it runs on this machine,
	// else 0: its CPU is the workload's, not another load on the host.
	ServerPID int
}

// DBCounters is one reading of the server's cumulative counters; nil
// fields are not available. Times are in milliseconds.
type DBCounters struct {
	BlksRead, BlksHit *int64 // blocks read from the OS, found in the engine's cache
	BlkReadTime       *float64
	// ClientReads are the reads of the client sessions alone, whose waits
	// the polls see.
	ClientReads               *int64
	ClientReadTime            *float64
	WALWrites, WALSyncs       *int64
	WALWriteTime, WALSyncTime *float64
	WALBytes                  *int64
	// WALFPI are the full-page images written to the WAL (PostgreSQL's
	// wal_fpi).
	WALFPI            *int64
	Checkpoints       *int64
	BuffersCheckpoint *int64 // blocks written by checkpoints
	// Every data-file read, write and sync (InnoDB's, read-ahead
	// included); BlkReadTime times DataReads when they are given, else
	// BlksRead.
	DataReads, DataReadBytes   *int64
	DataWrites, DataWriteBytes *int64
	DataSyncs                  *int64
	RowLockWaits               *int64
	RowLockTime                *float64
	// TimedWaits are the server's cumulative count and time of each wait
	// event it times itself; nil when it times none.
	TimedWaits map[WaitKey]WaitTotal
	// Replicas are the primary's standbys by name; nil without any.
	Replicas map[string]ReplicaStat
	// Nodes are a cluster's replication counters, one per node; nil for
	// a single server.
	Nodes []NodeCounters
}

// NodeCounters are one Galera node's cumulative replication counters; nil
// fields are not available.
type NodeCounters struct {
	Node                               int // from 1
	FlowControlPausedNs                *int64
	FlowControlSent, FlowControlRecv   *int64
	CertFailures, BFAborts, Replicated *int64
}

// WaitTotal is a wait event's cumulative count and time (milliseconds).
type WaitTotal struct {
	N  int64
	Ms float64
}

// WaitKey is one wait event; sessions on CPU have a key of their own.
type WaitKey struct{ Class, Event string }

// WaitCount is how many active sessions one poll saw in one wait event.
type WaitCount struct {
	Key WaitKey
	N   int
}

// ObserversInside keys the engine limit that says the observers run in the
// measured database: a caveat on its counters, not a metric.
const ObserversInside = "db.observers_inside"

// LocalHost tells whether a server reached at host (a name, an address or
// a Unix socket directory) runs on this machine.
func LocalHost(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dbObserver owns the sampler's one connection. It reconnects after an
// error (the study restarts the server between runs), at most once per
// reconnectEvery, so that a server that is down costs nothing.
type dbObserver struct {
	src  DBSource
	info DBInfo

	mu          sync.Mutex
	conn        DBConn
	lastAttempt time.Time
	restarting  bool // calibra is restarting the server: read nothing
}

const reconnectEvery = time.Second

// dbReading is a DBCounters reading, or why there is none.
type dbReading struct {
	DBCounters
	err error
}

func openDB(ctx context.Context, src DBSource, proc string) (*dbObserver, error) {
	conn, info, err := src.Open(ctx, proc)
	if err != nil {
		return nil, err
	}
	if info.Limits == nil {
		info.Limits = map[string]string{}
	}
	return &dbObserver{src: src, info: info, conn: conn}, nil
}

// withConn runs f on the connection, reconnecting first if an earlier
// error closed it: at most once per reconnectEvery, but at once for an
// edge, whose reading bounds a window: a tick's failed read a moment
// before must not cost a 3 s point its every server figure; an error from
// f closes it.
func (d *dbObserver) withConn(ctx context.Context, edge bool, f func(DBConn) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.restarting {
		return errRestarting
	}
	if d.conn == nil {
		if !edge && time.Since(d.lastAttempt) < reconnectEvery {
			return fmt.Errorf("the database sampler is disconnected")
		}
		d.lastAttempt = time.Now()
		conn, err := d.src.Connect(ctx)
		if err != nil {
			return fmt.Errorf("reconnect the database sampler: %w", err)
		}
		d.conn = conn
	}
	if err := f(d.conn); err != nil {
		d.conn.Close()
		d.conn = nil
		d.lastAttempt = time.Now()
		return err
	}
	return nil
}

func (d *dbObserver) counters(ctx context.Context, edge bool) dbReading {
	var r dbReading
	r.err = d.withConn(ctx, edge, func(conn DBConn) error {
		var err error
		if r.DBCounters, err = conn.Counters(ctx); err != nil {
			return fmt.Errorf("read the database counters: %w", err)
		}
		return nil
	})
	return r
}

func (d *dbObserver) waits(ctx context.Context) ([]WaitCount, error) {
	var out []WaitCount
	err := d.withConn(ctx, false, func(conn DBConn) error {
		var err error
		if out, err = conn.Waits(ctx); err != nil {
			return fmt.Errorf("sample %s: %w", d.info.WaitView, err)
		}
		return nil
	})
	return out, err
}

// errRestarting is the answer of every read while calibra restarts the
// server: not a failure of the observers.
var errRestarting = errors.New("calibra is restarting the server")

// restart holds every read while the server restarts, then drops the
// connection to the old server so that the next read reconnects at once.
func (d *dbObserver) restart(f func() error) error {
	d.mu.Lock()
	d.restarting = true
	d.mu.Unlock()
	err := f()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.restarting = false
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
	d.lastAttempt = time.Time{}
	return err
}

func (d *dbObserver) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
}

// deltas takes counters' deltas over a window, saying in missing why
// one is absent.
type deltas struct{ missing map[string]string }

const countersReset = "the counters were reset in the window (database recreated or statistics reset)"

// delta is y - x, absent when either is or the counter fell.
func (w deltas) delta(key string, x, y *int64) *int64 {
	if x == nil || y == nil {
		if _, known := w.missing[key]; !known {
			w.missing[key] = "the server returned no value"
		}
		return nil
	}
	if *y < *x {
		w.missing[key] = countersReset
		return nil
	}
	return ptr(*y - *x)
}

// given is delta of a counter only some engines have: absent without a
// word when neither reading has it.
func (w deltas) given(key string, x, y *int64) *int64 {
	if x == nil && y == nil {
		return nil
	}
	return w.delta(key, x, y)
}

// avg is Δtime / Δcount, absent when nothing happened (none says so) or
// timing is off.
func (w deltas) avg(key string, count *int64, x, y *float64, none string) *float64 {
	if _, known := w.missing[key]; known || count == nil || x == nil || y == nil {
		return nil
	}
	if *count == 0 {
		w.missing[key] = none
		return nil
	}
	if *y < *x {
		w.missing[key] = countersReset
		return nil
	}
	return ptr(round3((*y - *x) / float64(*count)))
}

// dbRates fills db with the counter deltas between a and b. A delta that
// is negative means the counters were reset in the window (the database
// recreated from its template, or its statistics reset): it is left absent.
func dbRates(a, b dbReading, db *results.ObserveDB, static, missing map[string]string) {
	for k, why := range static {
		missing[k] = why
	}
	for _, c := range []dbReading{a, b} {
		if c.err != nil {
			missing["db"] = c.err.Error()
			return
		}
	}
	w := deltas{missing}
	db.BlksRead = w.delta("db.blks_read", a.BlksRead, b.BlksRead)
	db.BlksHit = w.delta("db.blks_hit", a.BlksHit, b.BlksHit)
	if db.BlksRead != nil && db.BlksHit != nil {
		if n := *db.BlksRead + *db.BlksHit; n > 0 {
			db.HitPct = ptr(round3(100 * float64(*db.BlksHit) / float64(n)))
		} else {
			missing["db.hit_pct"] = "no block was accessed in the window"
		}
	}
	db.DataReads = w.given("db.data_reads", a.DataReads, b.DataReads)
	db.DataReadBytes = w.given("db.data_read_bytes", a.DataReadBytes, b.DataReadBytes)
	db.DataWrites = w.given("db.data_writes", a.DataWrites, b.DataWrites)
	db.DataWriteBytes = w.given("db.data_write_bytes", a.DataWriteBytes, b.DataWriteBytes)
	db.DataSyncs = w.given("db.data_syncs", a.DataSyncs, b.DataSyncs)
	reads := db.BlksRead
	if a.DataReads != nil || b.DataReads != nil {
		reads = db.DataReads
	}
	db.DataFileReadAvgMs = w.avg("db.data_file_read_avg_ms", reads, a.BlkReadTime, b.BlkReadTime, "no data-file read in the window")
	db.RowLockWaits = w.given("db.row_lock_waits", a.RowLockWaits, b.RowLockWaits)
	db.RowLockAvgMs = w.avg("db.row_lock_avg_ms", db.RowLockWaits, a.RowLockTime, b.RowLockTime, "no row lock wait ended in the window")
	if a.TimedWaits != nil || b.TimedWaits != nil {
		db.TimedWaits = timedWaits(a.TimedWaits, b.TimedWaits, missing)
	}
	if _, absent := static["db.client_reads"]; !absent {
		db.ClientReads = w.delta("db.client_reads", a.ClientReads, b.ClientReads)
		db.ClientReadAvgMs = w.avg("db.client_read_avg_ms", db.ClientReads, a.ClientReadTime, b.ClientReadTime, "no client-backend read in the window")
	}
	if _, absent := static["db.wal_writes"]; !absent {
		db.WALWrites = w.delta("db.wal_writes", a.WALWrites, b.WALWrites)
		db.WALWriteAvgMs = w.avg("db.wal_write_avg_ms", db.WALWrites, a.WALWriteTime, b.WALWriteTime, "no WAL write in the window")
		db.WALSyncs = w.delta("db.wal_syncs", a.WALSyncs, b.WALSyncs)
		db.WALSyncAvgMs = w.avg("db.wal_sync_avg_ms", db.WALSyncs, a.WALSyncTime, b.WALSyncTime, "no WAL sync in the window")
		db.WALBytes, db.WALFPI = w.delta("db.wal_bytes", a.WALBytes, b.WALBytes), w.given("db.wal_fpi", a.WALFPI, b.WALFPI)
	}
	db.Checkpoints = w.delta("db.checkpoints", a.Checkpoints, b.Checkpoints)
	db.BuffersCheckpoint = w.delta("db.buffers_checkpoint", a.BuffersCheckpoint, b.BuffersCheckpoint)
}

// nodeRates is each node's replication counters over a window of
// windowS seconds: the share of it the node's replication was paused by
// flow control, and the deltas.
func nodeRates(a, b []NodeCounters, windowS float64, missing map[string]string) []results.ObserveNode {
	if len(a) == 0 || len(a) != len(b) {
		return nil
	}
	out := make([]results.ObserveNode, len(a))
	for i := range a {
		key := fmt.Sprintf("db.nodes.%d.", a[i].Node)
		delta := func(name string, x, y *int64) *int64 {
			switch {
			case x == nil || y == nil:
				missing[key+name] = "the node returned no value"
			case *y < *x:
				missing[key+name] = "the node's counters were reset in the window (the node restarted)"
			default:
				return ptr(*y - *x)
			}
			return nil
		}
		n := results.ObserveNode{Node: a[i].Node,
			FlowControlSent: delta("flow_control_sent", a[i].FlowControlSent, b[i].FlowControlSent),
			FlowControlRecv: delta("flow_control_recv", a[i].FlowControlRecv, b[i].FlowControlRecv),
			CertFailures:    delta("local_cert_failures", a[i].CertFailures, b[i].CertFailures),
			BFAborts:        delta("local_bf_aborts", a[i].BFAborts, b[i].BFAborts),
			Replicated:      delta("replicated", a[i].Replicated, b[i].Replicated)}
		if paused := delta("flow_control_paused_pct", a[i].FlowControlPausedNs, b[i].FlowControlPausedNs); paused != nil && windowS > 0 {
			n.FlowControlPausedPct = ptr(round3(100 * float64(*paused) / 1e9 / windowS))
		}
		out[i] = n
	}
	return out
}

// topTimedWaits bounds the timed waits a window lists: the top of a
// server's few hundred events holds its time.
const topTimedWaits = 15

// timedWaits is the events the server timed between a and b, most time
// first: nil, with the reason, when its counters were reset in between.
func timedWaits(a, b map[WaitKey]WaitTotal, missing map[string]string) []results.TimedWait {
	var out []results.TimedWait
	for k, y := range b {
		x := a[k] // an event absent from a had not occurred yet
		n, ms := y.N-x.N, y.Ms-x.Ms
		if n < 0 || ms < 0 {
			missing["db.timed_waits"] = "the wait counters were reset in the window"
			return nil
		}
		if n > 0 {
			out = append(out, results.TimedWait{Class: k.Class, Event: k.Event, Waits: n,
				Seconds: round3(ms / 1000), AvgMs: round3(ms / float64(n))})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Class+"/"+out[i].Event < out[j].Class+"/"+out[j].Event
	})
	if len(out) > topTimedWaits {
		out = out[:topTimedWaits]
	}
	if len(out) == 0 {
		missing["db.timed_waits"] = "the server timed no wait in the window"
	}
	return out
}
