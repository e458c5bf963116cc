// Package observepg is the database observer's PostgreSQL dialect: it
// reads pg_stat_database, pg_stat_io (16+), pg_stat_wal (14+),
// pg_stat_bgwriter or pg_stat_checkpointer (17+), and the wait events of
// pg_stat_activity.
package observepg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

// ApplicationName marks the sampler's own connection in pg_stat_activity.
const ApplicationName = "calibra-observe"

func init() {
	engine.RegisterFor(observe.Dialects, postgres.Name, func(t *postgres.Target) (observe.DBSource, error) {
		cc, database := t.ObserveConn()
		if cc == nil {
			return nil, errors.New("no connection for the database sampler")
		}
		src := newSource(cc, database)
		for _, r := range t.Replicas() {
			src.standbys = append(src.standbys, r.Name)
		}
		return src, nil
	})
}

// source connects to cfg to observe database. Open may move cfg to
// another database; Connect reuses what Open chose.
type source struct {
	cfg      *pgx.ConnConfig
	database string   // whose backends and counters are observed
	standbys []string // the standbys' names on the primary (--replicas)

	// Fixed at Open from the server's version and settings.
	countersSQL string
	scanTargets func(c *observe.DBCounters) []any
}

// observerDatabase is where the sampler connects when it is given the
// observed database itself: the cluster-wide views answer from any
// database, and a poll run inside the observed one would land in its
// xact_commit, and so in tpm_db (10 polls a second).
const observerDatabase = "postgres"

func newSource(cfg *pgx.ConnConfig, database string) *source {
	cc := cfg.Copy()
	cc.RuntimeParams["application_name"] = ApplicationName
	if database == "" {
		database = cc.Database
	}
	return &source{cfg: cc, database: database}
}

func (p *source) Open(ctx context.Context, proc string) (observe.DBConn, observe.DBInfo, error) {
	info := observe.DBInfo{Database: p.database, WaitView: "pg_stat_activity", Limits: map[string]string{}}
	var conn *pgx.Conn
	if p.cfg.Database == p.database && p.database != observerDatabase {
		other := p.cfg.Copy()
		other.Database = observerDatabase
		var err error
		if conn, err = pgx.ConnectConfig(ctx, other); err == nil {
			p.cfg = other
		} else {
			info.Limits[observe.ObserversInside] = fmt.Sprintf("the observers could not connect to the %s database (%v), so they run in %s: its commit counter, and tpm_db, include their statements (about 10 a second)",
				observerDatabase, err, p.database)
		}
	}
	if conn == nil {
		var err error
		if conn, err = pgx.ConnectConfig(ctx, p.cfg); err != nil {
			return nil, info, fmt.Errorf("connect the database sampler to %s@%s:%d/%s: %w", p.cfg.User, p.cfg.Host, p.cfg.Port, p.cfg.Database, err)
		}
	}
	var version int
	var ioTiming, walTiming string
	err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int,
		current_setting('track_io_timing'), coalesce(current_setting('track_wal_io_timing', true), '')`).Scan(&version, &ioTiming, &walTiming)
	if err != nil {
		conn.Close(ctx)
		return nil, info, fmt.Errorf("read the server version for the database sampler: %w", err)
	}
	p.plan(version, ioTiming == "on", walTiming == "on", info.Limits)
	info.ServerPID = p.localServer(ctx, conn, proc)
	return &pgConn{conn: conn, src: p}, info, nil
}

func (p *source) Connect(ctx context.Context) (observe.DBConn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn: conn, src: p}, nil
}

// plan builds the one query that reads every counter this server version
// has, and records in limits why the others are absent.
func (p *source) plan(version int, ioTiming, walTiming bool, limits map[string]string) {
	type target = func(c *observe.DBCounters) any
	cols := []string{"d.blks_read", "d.blks_hit", "d.blk_read_time"}
	from := []string{"(SELECT 1) one LEFT JOIN pg_stat_database d ON d.datname = $1"}
	targets := []target{
		func(c *observe.DBCounters) any { return &c.BlksRead },
		func(c *observe.DBCounters) any { return &c.BlksHit },
		func(c *observe.DBCounters) any { return &c.BlkReadTime },
	}
	add := func(col string, t target) {
		cols = append(cols, col)
		targets = append(targets, t)
	}
	if !ioTiming {
		limits["db.data_file_read_avg_ms"] = "track_io_timing is off on the server"
		limits["db.client_read_avg_ms"] = "track_io_timing is off on the server"
	}
	if version >= 160000 {
		from = append(from, `CROSS JOIN (SELECT sum(reads)::bigint AS reads, sum(read_time) AS read_time FROM pg_stat_io
			WHERE backend_type = 'client backend' AND object = 'relation' AND context = 'normal') io`)
		add("io.reads", func(c *observe.DBCounters) any { return &c.ClientReads })
		add("io.read_time", func(c *observe.DBCounters) any { return &c.ClientReadTime })
	} else {
		limits["db.client_reads"] = fmt.Sprintf("PostgreSQL %d has no pg_stat_io (16+)", version/10000)
	}
	switch {
	case version >= 180000:
		// PostgreSQL 18 moved WAL I/O counts and times into pg_stat_io.
		from = append(from, `CROSS JOIN pg_stat_wal w CROSS JOIN (SELECT sum(writes)::bigint AS writes, sum(write_time) AS write_time,
			sum(fsyncs)::bigint AS fsyncs, sum(fsync_time) AS fsync_time FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') wio`)
		add("wio.writes", func(c *observe.DBCounters) any { return &c.WALWrites })
		add("wio.write_time", func(c *observe.DBCounters) any { return &c.WALWriteTime })
		add("wio.fsyncs", func(c *observe.DBCounters) any { return &c.WALSyncs })
		add("wio.fsync_time", func(c *observe.DBCounters) any { return &c.WALSyncTime })
		add("w.wal_bytes::bigint", func(c *observe.DBCounters) any { return &c.WALBytes })
		add("w.wal_fpi", func(c *observe.DBCounters) any { return &c.WALFPI })
	case version >= 140000:
		from = append(from, "CROSS JOIN pg_stat_wal w")
		add("w.wal_write", func(c *observe.DBCounters) any { return &c.WALWrites })
		add("w.wal_write_time", func(c *observe.DBCounters) any { return &c.WALWriteTime })
		add("w.wal_sync", func(c *observe.DBCounters) any { return &c.WALSyncs })
		add("w.wal_sync_time", func(c *observe.DBCounters) any { return &c.WALSyncTime })
		add("w.wal_bytes::bigint", func(c *observe.DBCounters) any { return &c.WALBytes })
		add("w.wal_fpi", func(c *observe.DBCounters) any { return &c.WALFPI })
	default:
		limits["db.wal_writes"] = fmt.Sprintf("PostgreSQL %d has no pg_stat_wal (14+)", version/10000)
	}
	if version >= 140000 && !walTiming {
		limits["db.wal_write_avg_ms"] = "track_wal_io_timing is off on the server"
		limits["db.wal_sync_avg_ms"] = "track_wal_io_timing is off on the server"
	}
	if version >= 170000 {
		from = append(from, "CROSS JOIN pg_stat_checkpointer c")
		add("c.num_timed + c.num_requested", func(c *observe.DBCounters) any { return &c.Checkpoints })
		add("c.buffers_written", func(c *observe.DBCounters) any { return &c.BuffersCheckpoint })
	} else {
		from = append(from, "CROSS JOIN pg_stat_bgwriter b")
		add("b.checkpoints_timed + b.checkpoints_req", func(c *observe.DBCounters) any { return &c.Checkpoints })
		add("b.buffers_checkpoint", func(c *observe.DBCounters) any { return &c.BuffersCheckpoint })
	}
	col, join := dataWrites(version)
	if join != "" {
		from = append(from, join)
	}
	add(col, func(c *observe.DBCounters) any { return &c.DataWriteBytes })
	p.countersSQL = "SELECT " + strings.Join(cols, ", ") + "\nFROM " + strings.Join(from, "\n")
	p.scanTargets = func(c *observe.DBCounters) []any {
		out := make([]any, len(targets))
		for i, t := range targets {
			out[i] = t(c)
		}
		return out
	}
}

// dataWrites is the column of the data files' bytes written by every
// process, and the join it needs ("" for none): pg_stat_io's relation
// writes from 16 (in bytes from 18); before, the buffers written by
// checkpoints, the background writer and backends (pg_stat_bgwriter, which
// plan joins as b before 17), a backend's extension of a file included.
func dataWrites(version int) (col, join string) {
	if version < 160000 {
		return "(b.buffers_checkpoint + b.buffers_clean + b.buffers_backend) * current_setting('block_size')::bigint", ""
	}
	sum := "sum(writes * op_bytes)"
	if version >= 180000 {
		sum = "sum(write_bytes)"
	}
	return "dw.bytes", "CROSS JOIN (SELECT " + sum + "::bigint AS bytes FROM pg_stat_io WHERE object = 'relation') dw"
}

// localServer finds the server's postmaster when the observer reaches it
// over a Unix socket or loopback, from its own backend's parent: the
// server's CPU is then the workload's, not another load on the host. 0
// when it is not found.
func (p *source) localServer(ctx context.Context, conn *pgx.Conn, proc string) int {
	if !observe.LocalHost(p.cfg.Host) {
		return 0
	}
	var backend int
	if conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend) != nil {
		return 0
	}
	pid, _ := observe.ParentOf(proc, backend, "postgres")
	return pid
}

// WaitLatency is the mean latency of one wait where the counters give it.
// For data-file reads pg_stat_io's client-backend figure is preferred: it
// counts exactly the backends the wait samples see. PostgreSQL 17 renamed
// the events in CamelCase (WALSync became WalSync): case does not matter.
func (p *source) WaitLatency(key observe.WaitKey, db *results.ObserveDB) *float64 {
	if key.Class != "IO" {
		return nil
	}
	switch strings.ToLower(key.Event) {
	case "datafileread":
		if db.ClientReadAvgMs != nil {
			return db.ClientReadAvgMs
		}
		return db.DataFileReadAvgMs
	case "walwrite":
		return db.WALWriteAvgMs
	case "walsync":
		return db.WALSyncAvgMs
	}
	return nil
}

// pgConn is one connection of the sampler.
type pgConn struct {
	conn *pgx.Conn
	src  *source
}

func (c *pgConn) Counters(ctx context.Context) (observe.DBCounters, error) {
	var out observe.DBCounters
	err := c.conn.QueryRow(ctx, c.src.countersSQL, c.src.database).Scan(c.src.scanTargets(&out)...)
	if err != nil || len(c.src.standbys) == 0 {
		return out, err
	}
	out.Replicas, err = c.replicas(ctx)
	return out, err
}

// replicaSQL is each standby as the primary sees it: its lags in ms (null
// while it is caught up and idle) and the WAL it has yet to replay.
const replicaSQL = `SELECT application_name, state, coalesce(sync_state, ''),
	(extract(epoch FROM write_lag) * 1000)::float8, (extract(epoch FROM flush_lag) * 1000)::float8,
	(extract(epoch FROM replay_lag) * 1000)::float8, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint
FROM pg_stat_replication WHERE application_name = ANY($1)`

func (c *pgConn) replicas(ctx context.Context) (map[string]observe.ReplicaStat, error) {
	rows, err := c.conn.Query(ctx, replicaSQL, c.src.standbys)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_replication: %w", err)
	}
	out := map[string]observe.ReplicaStat{}
	var name string
	var st observe.ReplicaStat
	_, err = pgx.ForEachRow(rows, []any{&name, &st.State, &st.SyncState, &st.WriteLagMs, &st.FlushLagMs, &st.ReplayLagMs, &st.ReplayLagBytes}, func() error {
		out[name] = st
		return nil
	})
	return out, err
}

// waitSQL counts the active backends of the observed database per wait
// event; no wait event means on CPU (or in uninstrumented code).
const waitSQL = `SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'CPU'), count(*)
FROM pg_stat_activity
WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()
GROUP BY 1, 2`

func (c *pgConn) Waits(ctx context.Context) ([]observe.WaitCount, error) {
	rows, err := c.conn.Query(ctx, waitSQL, c.src.database)
	if err != nil {
		return nil, err
	}
	var out []observe.WaitCount
	var w observe.WaitCount
	_, err = pgx.ForEachRow(rows, []any{&w.Key.Class, &w.Key.Event, &w.N}, func() error {
		out = append(out, w)
		return nil
	})
	return out, err
}

func (c *pgConn) Close() { c.conn.Close(context.Background()) }
