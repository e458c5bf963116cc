// Package profilemy is MariaDB's part of calibra profile: InnoDB's status
// counters, performance_schema's transactions (Handler_commit where it
// counts none) and the processlist's working sessions, read in read-only
// sessions.
package profilemy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/profile"
)

func init() {
	engine.RegisterFor(profile.Dialects, mariadb.Name, func(t *mariadb.Target) (profile.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *mariadb.Target }

func (d dialect) Connect(ctx context.Context) (profile.Conn, error) {
	cfg := d.t.Config()
	if cfg == nil {
		return nil, errors.New("the MariaDB server has not started")
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["tx_read_only"] = "1"
	db, err := mariadb.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := conn{db: db}
	// performance_schema counts every account's transactions, one each
	// (as tpm_db does for calibra's); Handler_commit counts a commit a
	// statement too, so it is the fallback only.
	var enabled string
	if err := db.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'transaction'").Scan(&enabled); err == nil && enabled == "YES" {
		c.txSQL = "SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_transactions_summary_global_by_event_name"
	}
	return c, nil
}

// CheckGrants: the status counters are open to any account, but the
// processlist shows other accounts' sessions only with PROCESS.
func (d dialect) CheckGrants(ctx context.Context) error {
	cfg := d.t.Config()
	if cfg == nil {
		return errors.New("the MariaDB server has not started")
	}
	return d.t.CheckGrants(ctx, cfg.DBName, nil, []string{"PROCESS"}, "calibra profile samples every session's state (information_schema.PROCESSLIST)")
}

type conn struct {
	db    *sql.DB
	txSQL string // "" where performance_schema counts no transactions
}

func (c conn) Close() { c.db.Close() }

// status maps each status variable read to its counter: page reads are
// the buffer pool's misses (its reads of single pages) and read-ahead's,
// page writes the pages flushed, the log's bytes and syncs InnoDB's.
var status = map[string]func(r *reading) **int64{
	"INNODB_BUFFER_POOL_READS":         func(r *reading) **int64 { return &r.PageReads },
	"INNODB_BUFFER_POOL_READ_REQUESTS": func(r *reading) **int64 { return &r.PageHits },
	"INNODB_BUFFER_POOL_READ_AHEAD":    func(r *reading) **int64 { return &r.SeqReads },
	"INNODB_BUFFER_POOL_PAGES_FLUSHED": func(r *reading) **int64 { return &r.PageWrites },
	"INNODB_OS_LOG_WRITTEN":            func(r *reading) **int64 { return &r.WALBytes },
	"INNODB_OS_LOG_FSYNCS":             func(r *reading) **int64 { return &r.WALSyncs }, // before 10.8
	"INNODB_DATA_FSYNCS":               func(r *reading) **int64 { return &r.fsyncs },
	"HANDLER_COMMIT":                   func(r *reading) **int64 { return &r.Commits },
}

// reading is one read of the status: the counters, and InnoDB's syncs of
// every file, the log's own count from 10.8.
type reading struct {
	profile.Counters
	fsyncs *int64
}

var statusSQL = func() string {
	names := make([]string, 0, len(status))
	for k := range status {
		names = append(names, k)
	}
	sort.Strings(names)
	return "SELECT VARIABLE_NAME, CAST(VARIABLE_VALUE AS UNSIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('" + strings.Join(names, "', '") + "')"
}()

func (c conn) Counters(ctx context.Context) (profile.Counters, error) {
	r := reading{Counters: profile.Counters{Missing: map[string]string{}}}
	k := &r.Counters
	rows, err := c.db.QueryContext(ctx, statusSQL)
	if err != nil {
		return *k, fmt.Errorf("read InnoDB's status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return *k, err
		}
		*status[strings.ToUpper(name)](&r) = &v
	}
	if err := rows.Err(); err != nil {
		return *k, err
	}
	if k.WALSyncs == nil {
		// 10.8+ counts the redo log's syncs only among all of InnoDB's,
		// the data files' a few a second beside them (observemy's reading).
		k.WALSyncs = r.fsyncs
	}
	if k.PageReads == nil || k.PageHits == nil {
		return *k, errors.New("read InnoDB's status: no Innodb_buffer_pool_reads or _read_requests")
	}
	// Requests include the ones that had to read: hits are the rest.
	hits := *k.PageHits - *k.PageReads
	k.PageHits = &hits
	if k.SeqReads != nil {
		all := *k.PageReads + *k.SeqReads
		k.IOReads = &all
	}
	if c.txSQL != "" {
		var n int64
		if err := c.db.QueryRowContext(ctx, c.txSQL).Scan(&n); err != nil {
			return *k, fmt.Errorf("read performance_schema's transactions: %w", err)
		}
		k.Commits = &n
	} else {
		k.Missing["rates.commits_ps"] = "performance_schema does not count transactions on this server: Handler_commit, which counts a commit a statement as well, an upper bound"
	}
	return *k, nil
}

// Active counts the sessions on the observed database running a
// statement now, other than this one.
func (c conn) Active(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE DB = DATABASE() AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') AND ID <> CONNECTION_ID()`).Scan(&n)
	return n, err
}

func (c conn) Server(ctx context.Context) (profile.Server, error) {
	var s profile.Server
	err := c.db.QueryRowContext(ctx, `SELECT VERSION(), @@innodb_page_size, @@innodb_buffer_pool_size,
		(SELECT COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE())`).Scan(&s.Version, &s.PageBytes, &s.CacheBytes, &s.DataBytes)
	return s, err
}
