// Package observemy is the database observer's MariaDB dialect: InnoDB's
// status counters (buffer pool, data files, redo log, row locks), the
// waits performance_schema times (events_waits_summary_global_by_event_name,
// file_summary_by_event_name) and the waits of the observed database's
// sessions now (events_waits_current), or their states in PROCESSLIST
// where performance_schema is off.
package observemy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/observe"
	"github.com/calibra-bench/calibra/internal/results"
)

func init() {
	// A Galera cluster is observed on node 1, which the runner gives, with
	// every node's replication counters (clusterSource).
	engine.RegisterFor(observe.Dialects, mariadb.Name, func(t *mariadb.Target) (observe.DBSource, error) {
		if c := t.Cluster(); c != nil && c.Nodes()[0] == t {
			return newClusterSource(c)
		}
		return targetSource(t)
	})
}

func targetSource(t *mariadb.Target) (*source, error) {
	cfg := t.Config()
	if cfg == nil {
		return nil, errors.New("no connection for the database sampler: the server has not started")
	}
	return newSource(cfg), nil
}

// source connects as cfg to observe cfg's database.
type source struct {
	cfg      *mysql.Config // no database: the sampler sits outside the observed one
	database string
	pfs      bool // performance_schema is on: waits are timed and sampled from it
}

func newSource(cfg *mysql.Config) *source {
	cc := cfg.Clone()
	database := cc.DBName
	cc.DBName = ""
	return &source{cfg: cc, database: database}
}

// connect opens one connection, the sampler's only one.
func (p *source) connect(ctx context.Context) (*sql.DB, error) {
	db := mariadb.Open(p.cfg)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (p *source) Open(ctx context.Context, proc string) (observe.DBConn, observe.DBInfo, error) {
	info := observe.DBInfo{Database: p.database, Limits: map[string]string{}}
	db, err := p.connect(ctx)
	if err != nil {
		return nil, info, fmt.Errorf("connect the database sampler to %s@%s: %w", p.cfg.User, p.cfg.Addr, err)
	}
	var pfs int
	var pidFile, dataDir string
	err = db.QueryRowContext(ctx, "SELECT @@performance_schema, @@pid_file, @@datadir").Scan(&pfs, &pidFile, &dataDir)
	if err != nil {
		db.Close()
		return nil, info, fmt.Errorf("read the server's settings for the database sampler: %w", err)
	}
	p.pfs = pfs == 1
	info.WaitView = "performance_schema.events_waits_current"
	if !p.pfs {
		info.WaitView = "information_schema.PROCESSLIST"
		off := "performance_schema is off on the server"
		info.Limits["db.data_file_read_avg_ms"] = off
		info.Limits["db.timed_waits"] = off
	}
	// InnoDB reports its redo writes and bytes, but does not time them.
	var logSyncs int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_OS_LOG_FSYNCS'").Scan(&logSyncs); err != nil || logSyncs == 0 {
		info.Limits["db.wal_syncs"] = "InnoDB does not count its redo log syncs apart from the data files' (MariaDB 10.8+)"
	}
	info.Limits["db.wal_write_avg_ms"] = "InnoDB does not time its redo log writes"
	info.Limits["db.wal_sync_avg_ms"] = "InnoDB does not time its redo log syncs"
	info.Limits["db.client_reads"] = "InnoDB does not count the reads of client sessions apart"
	info.Limits["db.checkpoints"] = "InnoDB checkpoints continuously (fuzzy checkpoints), so the observer counts none over a step; an oltp step counts them (checkpoints_in_window, from INNODB_METRICS log_checkpoints)"
	info.Limits["db.buffers_checkpoint"] = "InnoDB counts the pages it flushes, not per checkpoint"
	info.ServerPID = p.localServer(proc, pidFile, dataDir)
	return &myConn{db: db, src: p}, info, nil
}

func (p *source) Connect(ctx context.Context) (observe.DBConn, error) {
	db, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	return &myConn{db: db, src: p}, nil
}

// localServer is the server's process when the sampler reaches it on this
// machine: the pid its pid file names, if that process is a mariadbd (or
// mysqld) working in the server's data directory, so that a stale file or
// a server in another PID namespace is not taken for it. 0 when it cannot
// be told.
func (p *source) localServer(proc, pidFile, dataDir string) int {
	host := p.cfg.Addr
	if p.cfg.Net != "unix" {
		host, _, _ = net.SplitHostPort(p.cfg.Addr)
	}
	if !observe.LocalHost(host) {
		return 0
	}
	if !filepath.IsAbs(pidFile) {
		pidFile = filepath.Join(dataDir, pidFile)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0
	}
	comm, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
	if err != nil || !(strings.HasPrefix(string(comm), "mariadbd") || strings.HasPrefix(string(comm), "mysqld")) {
		return 0
	}
	// The working directory is readable only to the server's account or
	// root; when it is, it must be the data directory.
	if cwd, err := os.Readlink(filepath.Join(proc, strconv.Itoa(pid), "cwd")); err == nil &&
		filepath.Clean(cwd) != filepath.Clean(dataDir) {
		return 0
	}
	return pid
}

// WaitLatency is the mean latency of one wait of key, as the server timed
// it over the window.
func (p *source) WaitLatency(key observe.WaitKey, db *results.ObserveDB) *float64 {
	if key == RowLock {
		return db.RowLockAvgMs
	}
	for _, w := range db.TimedWaits {
		if w.Class == key.Class && w.Event == key.Event {
			avg := w.AvgMs
			return &avg
		}
	}
	return nil
}

// waitKey splits a performance_schema instrument, wait/CLASS/KIND/EVENT...
// (wait/io/file/innodb/innodb_data_file), into class io/file and event
// innodb/innodb_data_file.
func waitKey(name string) observe.WaitKey {
	parts := strings.SplitN(strings.TrimPrefix(name, "wait/"), "/", 3)
	if len(parts) < 3 {
		return observe.WaitKey{Class: "other", Event: name}
	}
	return observe.WaitKey{Class: parts[0] + "/" + parts[1], Event: parts[2]}
}

// cpu is the key of an active session in no instrumented wait.
var cpu = observe.WaitKey{Class: "CPU", Event: "CPU"}

// myConn is one connection of the sampler.
type myConn struct {
	db  *sql.DB
	src *source
}

func (c *myConn) Close() { c.db.Close() }

// status maps each InnoDB status variable read to its counter.
var status = map[string]func(c *observe.DBCounters) **int64{
	// Pages read from the files on demand, and page requests: hit % is
	// 1 - reads/requests, MySQL's own buffer-pool hit ratio.
	"INNODB_BUFFER_POOL_READS":         func(c *observe.DBCounters) **int64 { return &c.BlksRead },
	"INNODB_BUFFER_POOL_READ_REQUESTS": func(c *observe.DBCounters) **int64 { return &c.BlksHit },
	"INNODB_DATA_READS":                func(c *observe.DBCounters) **int64 { return &c.DataReads },
	"INNODB_DATA_READ":                 func(c *observe.DBCounters) **int64 { return &c.DataReadBytes },
	"INNODB_DATA_WRITES":               func(c *observe.DBCounters) **int64 { return &c.DataWrites },
	"INNODB_DATA_WRITTEN":              func(c *observe.DBCounters) **int64 { return &c.DataWriteBytes },
	"INNODB_DATA_FSYNCS":               func(c *observe.DBCounters) **int64 { return &c.DataSyncs },
	"INNODB_LOG_WRITES":                func(c *observe.DBCounters) **int64 { return &c.WALWrites },
	"INNODB_OS_LOG_WRITTEN":            func(c *observe.DBCounters) **int64 { return &c.WALBytes },
	"INNODB_OS_LOG_FSYNCS":             func(c *observe.DBCounters) **int64 { return &c.WALSyncs }, // MySQL, MariaDB before 10.8
	"INNODB_ROW_LOCK_WAITS":            func(c *observe.DBCounters) **int64 { return &c.RowLockWaits },
}

// rowLockTime is in milliseconds, the one status variable read as a
// float.
const rowLockTime = "INNODB_ROW_LOCK_TIME"

var statusSQL = func() string {
	names := []string{rowLockTime}
	for k := range status {
		names = append(names, k)
	}
	sort.Strings(names)
	return "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('" +
		strings.Join(names, "', '") + "')"
}()

// psPerMs converts performance_schema's timers, in picoseconds.
const psPerMs = 1e9

// timedSQL reads every wait the server timed: its own idle waits (a
// session waiting for its client) are not the database's time.
const timedSQL = `SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM performance_schema.events_waits_summary_global_by_event_name
WHERE COUNT_STAR > 0 AND EVENT_NAME LIKE 'wait/%'`

// dataReadSQL times the data files' reads alone; its count equals
// Innodb_data_reads.
const dataReadSQL = `SELECT SUM_TIMER_READ FROM performance_schema.file_summary_by_event_name
WHERE EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'`

func (c *myConn) Counters(ctx context.Context) (observe.DBCounters, error) {
	var out observe.DBCounters
	rows, err := c.db.QueryContext(ctx, statusSQL)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			return out, err
		}
		name = strings.ToUpper(name)
		if name == rowLockTime {
			out.RowLockTime = &v
		} else if f := status[name]; f != nil {
			n := int64(v)
			*f(&out) = &n
		}
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	if out.BlksHit != nil && out.BlksRead != nil {
		// Requests include the ones that had to read: hits are the rest.
		*out.BlksHit -= *out.BlksRead
	}
	if out.WALSyncs == nil && out.DataSyncs != nil {
		// MariaDB 10.8+ counts the redo log's fsyncs only among all of
		// InnoDB's: one a commit at one committer, the data files' a few
		// a second beside them (measured on 10.11).
		syncs := *out.DataSyncs
		out.WALSyncs = &syncs
	}
	if !c.src.pfs {
		return out, nil
	}
	var readPs float64
	if err := c.db.QueryRowContext(ctx, dataReadSQL).Scan(&readPs); err == nil {
		out.BlkReadTime = ptr(readPs / psPerMs)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return out, err
	}
	if out.TimedWaits, err = c.timed(ctx); err != nil {
		return out, err
	}
	return out, nil
}

func (c *myConn) timed(ctx context.Context) (map[observe.WaitKey]observe.WaitTotal, error) {
	rows, err := c.db.QueryContext(ctx, timedSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[observe.WaitKey]observe.WaitTotal{}
	for rows.Next() {
		var name string
		var n int64
		var ps float64
		if err := rows.Scan(&name, &n, &ps); err != nil {
			return nil, err
		}
		out[waitKey(name)] = observe.WaitTotal{N: n, Ms: ps / psPerMs}
	}
	return out, rows.Err()
}

// waitsSQL lists, for each active session of the observed database but
// the sampler's own, its current waits: a session's innermost wait in
// progress (the highest event id) is the one it is in; none in progress
// means on CPU, or in code the server does not instrument. InnoDB's row
// lock waits are such code (10.6+): INNODB_TRX tells them, from a cache
// the server refreshes at most every 100 ms.
const waitsSQL = `SELECT t.THREAD_ID, w.EVENT_ID, w.EVENT_NAME, x.trx_id IS NOT NULL
FROM performance_schema.threads t
LEFT JOIN performance_schema.events_waits_current w ON w.THREAD_ID = t.THREAD_ID AND w.END_EVENT_ID IS NULL
LEFT JOIN information_schema.INNODB_TRX x ON x.trx_mysql_thread_id = t.PROCESSLIST_ID AND x.trx_state = 'LOCK WAIT'
WHERE t.PROCESSLIST_DB = ? AND t.PROCESSLIST_COMMAND NOT IN ('Sleep', 'Daemon')
	AND t.PROCESSLIST_ID <> CONNECTION_ID()`

// RowLock is the wait key of a session waiting for an InnoDB row lock,
// named as performance_schema would.
var RowLock = observe.WaitKey{Class: "lock/row", Event: "innodb/row_lock"}

// stateSQL is the fallback without performance_schema: the state of each
// active session (what SHOW PROCESSLIST shows), no state meaning on CPU.
const stateSQL = `SELECT COALESCE(NULLIF(STATE, ''), 'CPU'), COUNT(*) FROM information_schema.PROCESSLIST
WHERE DB = ? AND COMMAND NOT IN ('Sleep', 'Daemon') AND ID <> CONNECTION_ID()
GROUP BY 1`

func (c *myConn) Waits(ctx context.Context) ([]observe.WaitCount, error) {
	if !c.src.pfs {
		return c.states(ctx)
	}
	rows, err := c.db.QueryContext(ctx, waitsSQL, c.src.database)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type wait struct {
		id      int64
		name    string
		rowLock bool
	}
	current := map[int64]wait{}
	for rows.Next() {
		var thread int64
		var id sql.NullInt64
		var name sql.NullString
		var rowLock bool
		if err := rows.Scan(&thread, &id, &name, &rowLock); err != nil {
			return nil, err
		}
		if w, seen := current[thread]; !seen || id.Valid && id.Int64 > w.id {
			current[thread] = wait{id: id.Int64, name: name.String, rowLock: rowLock}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	counts := map[observe.WaitKey]int{}
	for _, w := range current {
		switch {
		case w.name == "idle":
			// Between statements, waiting for its client: not the
			// database's time.
		case w.rowLock:
			counts[RowLock]++
		case w.name != "":
			counts[waitKey(w.name)]++
		default:
			counts[cpu]++
		}
	}
	return waitCounts(counts), nil
}

func (c *myConn) states(ctx context.Context) ([]observe.WaitCount, error) {
	rows, err := c.db.QueryContext(ctx, stateSQL, c.src.database)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[observe.WaitKey]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		key := observe.WaitKey{Class: "state", Event: state}
		if state == "CPU" {
			key = cpu
		}
		counts[key] += n
	}
	return waitCounts(counts), rows.Err()
}

func waitCounts(counts map[observe.WaitKey]int) []observe.WaitCount {
	out := make([]observe.WaitCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, observe.WaitCount{Key: k, N: n})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
