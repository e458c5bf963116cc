package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/results"
)

// ApplicationName marks the sampler's own connection in pg_stat_activity.
const ApplicationName = "calibra-observe"

// pgObserver owns the sampler's one connection. It reconnects after an
// error (the study restarts the server between runs), at most once per
// reconnectEvery, so that a server that is down costs nothing.
type pgObserver struct {
	cfg      *pgx.ConnConfig
	database string // whose backends and counters are observed

	mu          sync.Mutex
	conn        *pgx.Conn
	lastAttempt time.Time
	restarting  bool // calibra is restarting the server: read nothing

	// Fixed at Start from the server's version and settings.
	countersSQL string
	scanTargets func(c *pgCounters) []any
	static      map[string]string // metric → why the server cannot give it
}

const reconnectEvery = time.Second

// pgCounters is one reading of the server's cumulative counters; nil
// fields were not available (NULL, or the view does not exist).
type pgCounters struct {
	blksRead, blksHit         *int64
	blkReadTime               *float64 // ms
	clientReads               *int64
	clientReadTime            *float64
	walWrites, walSyncs       *int64
	walWriteTime, walSyncTime *float64
	walBytes                  *int64
	checkpoints, bufCkpt      *int64
	err                       error
}

// waitCount is how many active backends one poll saw in one wait event.
type waitCount struct {
	key waitKey
	n   int
}

type waitKey struct{ class, event string }

// waitSQL counts the active backends of the observed database per wait
// event; no wait event means on CPU (or in uninstrumented code).
const waitSQL = `SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'CPU'), count(*)
FROM pg_stat_activity
WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()
GROUP BY 1, 2`

// observerDatabase is where the sampler connects when it is given the
// observed database itself: the cluster-wide views answer from any
// database, and a poll run inside the observed one would land in its
// xact_commit, and so in tpm_db (10 polls a second).
const observerDatabase = "postgres"

func newPGObserver(ctx context.Context, cfg *pgx.ConnConfig, database string) (*pgObserver, error) {
	cc := cfg.Copy()
	cc.RuntimeParams["application_name"] = ApplicationName
	if database == "" {
		database = cc.Database
	}
	p := &pgObserver{cfg: cc, database: database, static: map[string]string{}}
	var conn *pgx.Conn
	if cc.Database == database && database != observerDatabase {
		other := cc.Copy()
		other.Database = observerDatabase
		var err error
		if conn, err = pgx.ConnectConfig(ctx, other); err == nil {
			p.cfg = other
		} else {
			p.static[ObserversInside] = fmt.Sprintf("the observers could not connect to the %s database (%v), so they run in %s: its commit counter, and tpm_db, include their statements (about 10 a second)",
				observerDatabase, err, database)
		}
	}
	if conn == nil {
		var err error
		if conn, err = pgx.ConnectConfig(ctx, cc); err != nil {
			return nil, fmt.Errorf("connect the database sampler to %s@%s:%d/%s: %w", cc.User, cc.Host, cc.Port, cc.Database, err)
		}
	}
	p.conn = conn
	var version int
	var ioTiming, walTiming string
	err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
		current_setting('track_io_timing'), coalesce(current_setting('track_wal_io_timing', true), '')`).Scan(&version, &ioTiming, &walTiming)
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("read the server version for the database sampler: %w", err)
	}
	p.plan(version, ioTiming == "on", walTiming == "on")
	return p, nil
}

// plan builds the one query that reads every counter this server version
// has, and records why the others are absent.
func (p *pgObserver) plan(version int, ioTiming, walTiming bool) {
	cols := []string{"d.blks_read", "d.blks_hit", "d.blk_read_time"}
	from := []string{"(SELECT 1) one LEFT JOIN pg_stat_database d ON d.datname = $1"}
	targets := []func(c *pgCounters) any{
		func(c *pgCounters) any { return &c.blksRead },
		func(c *pgCounters) any { return &c.blksHit },
		func(c *pgCounters) any { return &c.blkReadTime },
	}
	add := func(col string, target func(c *pgCounters) any) {
		cols = append(cols, col)
		targets = append(targets, target)
	}
	if !ioTiming {
		p.static["db.data_file_read_avg_ms"] = "track_io_timing is off on the server"
		p.static["db.client_read_avg_ms"] = "track_io_timing is off on the server"
	}
	if version >= 160000 {
		from = append(from, `CROSS JOIN (SELECT sum(reads)::bigint AS reads, sum(read_time) AS read_time FROM pg_stat_io
			WHERE backend_type = 'client backend' AND object = 'relation' AND context = 'normal') io`)
		add("io.reads", func(c *pgCounters) any { return &c.clientReads })
		add("io.read_time", func(c *pgCounters) any { return &c.clientReadTime })
	} else {
		p.static["db.client_reads"] = fmt.Sprintf("PostgreSQL %d has no pg_stat_io (16+)", version/10000)
	}
	switch {
	case version >= 180000:
		// PostgreSQL 18 moved WAL I/O counts and times into pg_stat_io.
		from = append(from, `CROSS JOIN pg_stat_wal w CROSS JOIN (SELECT sum(writes)::bigint AS writes, sum(write_time) AS write_time,
			sum(fsyncs)::bigint AS fsyncs, sum(fsync_time) AS fsync_time FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') wio`)
		add("wio.writes", func(c *pgCounters) any { return &c.walWrites })
		add("wio.write_time", func(c *pgCounters) any { return &c.walWriteTime })
		add("wio.fsyncs", func(c *pgCounters) any { return &c.walSyncs })
		add("wio.fsync_time", func(c *pgCounters) any { return &c.walSyncTime })
		add("w.wal_bytes::bigint", func(c *pgCounters) any { return &c.walBytes })
	case version >= 140000:
		from = append(from, "CROSS JOIN pg_stat_wal w")
		add("w.wal_write", func(c *pgCounters) any { return &c.walWrites })
		add("w.wal_write_time", func(c *pgCounters) any { return &c.walWriteTime })
		add("w.wal_sync", func(c *pgCounters) any { return &c.walSyncs })
		add("w.wal_sync_time", func(c *pgCounters) any { return &c.walSyncTime })
		add("w.wal_bytes::bigint", func(c *pgCounters) any { return &c.walBytes })
	default:
		p.static["db.wal_writes"] = fmt.Sprintf("PostgreSQL %d has no pg_stat_wal (14+)", version/10000)
	}
	if version >= 140000 && !walTiming {
		p.static["db.wal_write_avg_ms"] = "track_wal_io_timing is off on the server"
		p.static["db.wal_sync_avg_ms"] = "track_wal_io_timing is off on the server"
	}
	if version >= 170000 {
		from = append(from, "CROSS JOIN pg_stat_checkpointer c")
		add("c.num_timed + c.num_requested", func(c *pgCounters) any { return &c.checkpoints })
		add("c.buffers_written", func(c *pgCounters) any { return &c.bufCkpt })
	} else {
		from = append(from, "CROSS JOIN pg_stat_bgwriter b")
		add("b.checkpoints_timed + b.checkpoints_req", func(c *pgCounters) any { return &c.checkpoints })
		add("b.buffers_checkpoint", func(c *pgCounters) any { return &c.bufCkpt })
	}
	p.countersSQL = "SELECT " + strings.Join(cols, ", ") + "\nFROM " + strings.Join(from, "\n")
	p.scanTargets = func(c *pgCounters) []any {
		out := make([]any, len(targets))
		for i, t := range targets {
			out[i] = t(c)
		}
		return out
	}
}

// withConn runs f on the connection, reconnecting first if an earlier
// error closed it; an error from f closes it.
func (p *pgObserver) withConn(ctx context.Context, f func(*pgx.Conn) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.restarting {
		return errRestarting
	}
	if p.conn == nil {
		if time.Since(p.lastAttempt) < reconnectEvery {
			return fmt.Errorf("the database sampler is disconnected")
		}
		p.lastAttempt = time.Now()
		conn, err := pgx.ConnectConfig(ctx, p.cfg)
		if err != nil {
			return fmt.Errorf("reconnect the database sampler: %w", err)
		}
		p.conn = conn
	}
	if err := f(p.conn); err != nil {
		p.conn.Close(context.Background())
		p.conn = nil
		p.lastAttempt = time.Now()
		return err
	}
	return nil
}

func (p *pgObserver) counters(ctx context.Context) pgCounters {
	var c pgCounters
	c.err = p.withConn(ctx, func(conn *pgx.Conn) error {
		if err := conn.QueryRow(ctx, p.countersSQL, p.database).Scan(p.scanTargets(&c)...); err != nil {
			return fmt.Errorf("read the database counters: %w", err)
		}
		return nil
	})
	return c
}

func (p *pgObserver) waits(ctx context.Context) ([]waitCount, error) {
	var out []waitCount
	err := p.withConn(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, waitSQL, p.database)
		if err != nil {
			return fmt.Errorf("sample pg_stat_activity: %w", err)
		}
		var w waitCount
		_, err = pgx.ForEachRow(rows, []any{&w.key.class, &w.key.event, &w.n}, func() error {
			out = append(out, w)
			return nil
		})
		if err != nil {
			return fmt.Errorf("sample pg_stat_activity: %w", err)
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
func (p *pgObserver) restart(f func() error) error {
	p.mu.Lock()
	p.restarting = true
	p.mu.Unlock()
	err := f()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restarting = false
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
	p.lastAttempt = time.Time{}
	return err
}

func (p *pgObserver) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		p.conn.Close(context.Background())
		p.conn = nil
	}
}

// dbRates fills db with the counter deltas between a and b. A delta that
// is negative means the counters were reset in the window (the database
// recreated from its template, or pg_stat_reset): it is left absent.
func dbRates(a, b pgCounters, db *results.ObserveDB, static, missing map[string]string) {
	for k, why := range static {
		missing[k] = why
	}
	for _, c := range []pgCounters{a, b} {
		if c.err != nil {
			missing["db"] = c.err.Error()
			return
		}
	}
	reset := "the counters were reset in the window (database recreated or statistics reset)"
	delta := func(key string, x, y *int64) *int64 {
		if x == nil || y == nil {
			if _, known := missing[key]; !known {
				missing[key] = "the server returned no value"
			}
			return nil
		}
		if *y < *x {
			missing[key] = reset
			return nil
		}
		return ptr(*y - *x)
	}
	// avg is Δtime / Δcount, absent when nothing happened or timing is off.
	avg := func(key string, count *int64, x, y *float64, none string) *float64 {
		if _, known := missing[key]; known || count == nil || x == nil || y == nil {
			return nil
		}
		if *count == 0 {
			missing[key] = none
			return nil
		}
		if *y < *x {
			missing[key] = reset
			return nil
		}
		return ptr(round3((*y - *x) / float64(*count)))
	}
	db.BlksRead = delta("db.blks_read", a.blksRead, b.blksRead)
	db.BlksHit = delta("db.blks_hit", a.blksHit, b.blksHit)
	if db.BlksRead != nil && db.BlksHit != nil {
		if n := *db.BlksRead + *db.BlksHit; n > 0 {
			db.HitPct = ptr(round3(100 * float64(*db.BlksHit) / float64(n)))
		} else {
			missing["db.hit_pct"] = "no block was accessed in the window"
		}
	}
	db.DataFileReadAvgMs = avg("db.data_file_read_avg_ms", db.BlksRead, a.blkReadTime, b.blkReadTime, "no data-file read in the window")
	if _, absent := static["db.client_reads"]; !absent {
		db.ClientReads = delta("db.client_reads", a.clientReads, b.clientReads)
		db.ClientReadAvgMs = avg("db.client_read_avg_ms", db.ClientReads, a.clientReadTime, b.clientReadTime, "no client-backend read in the window")
	}
	if _, absent := static["db.wal_writes"]; !absent {
		db.WALWrites = delta("db.wal_writes", a.walWrites, b.walWrites)
		db.WALWriteAvgMs = avg("db.wal_write_avg_ms", db.WALWrites, a.walWriteTime, b.walWriteTime, "no WAL write in the window")
		db.WALSyncs = delta("db.wal_syncs", a.walSyncs, b.walSyncs)
		db.WALSyncAvgMs = avg("db.wal_sync_avg_ms", db.WALSyncs, a.walSyncTime, b.walSyncTime, "no WAL sync in the window")
		db.WALBytes = delta("db.wal_bytes", a.walBytes, b.walBytes)
	}
	db.Checkpoints = delta("db.checkpoints", a.checkpoints, b.checkpoints)
	db.BuffersCheckpoint = delta("db.buffers_checkpoint", a.bufCkpt, b.bufCkpt)
}

// ObserversInside keys the engine limit that says the observers run in the
// measured database: a caveat on its counters, not a metric.
const ObserversInside = "db.observers_inside"

// localServer finds the server's postmaster when the observer reaches it
// over a Unix socket or loopback, from its own backend's parent: the
// server's CPU is then the workload's, not another load on the host.
func (p *pgObserver) localServer(ctx context.Context, proc string) (int, bool) {
	host := p.cfg.Host
	if !strings.HasPrefix(host, "/") && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return 0, false
		}
	}
	var backend int
	if p.withConn(ctx, func(conn *pgx.Conn) error { return conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend) }) != nil {
		return 0, false
	}
	data, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(backend), "stat"))
	if err != nil || !bytes.Contains(data, []byte("(postgres)")) {
		return 0, false
	}
	t, ok := parseProcStat(backend, data)
	return t.ppid, ok && t.ppid > 1
}
