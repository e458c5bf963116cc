// Package replaymy is MariaDB's commit path for the profile replay:
// calibra paces each committer's commits, each one autocommitted
// statement that updates its committer's one row with a payload cut from
// a pool of random bytes the session holds (a user variable), so that the
// redo log a commit writes is the profile's and the server syncs it as it
// syncs an application's commits. An update of one row a committer, not
// an insert: the table stays a few pages, where inserts at the profile's
// redo rate would grow it by megabytes a second.
//
// Not a stored procedure's loop, as PostgreSQL's path is. A COMMIT inside
// a procedure does not wait for the redo sync (it needs FLUSH LOCAL ENGINE
// LOGS after it), and a statement in a procedure that reads a local
// variable is logged with the variable's value inlined: cutting the
// payload from a 1 MiB local pool made the server escape the whole pool
// at every commit (escape_string_for_mysql under Item_splocal's
// append_for_log, the top of perf's profile), both cores busy for 106
// commits/s of a TPC-C-like profile's 1,558.
package replaymy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/replay"
)

func init() {
	engine.RegisterFor(replay.Dialects, mariadb.Name, func(t *mariadb.Target) (replay.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *mariadb.Target }

func (d dialect) Connect(ctx context.Context) (replay.Conn, error) {
	cfg := d.t.Config()
	if cfg == nil {
		return nil, errors.New("the MariaDB server has not started")
	}
	db, err := mariadb.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// One session: it holds the pool, and its commits follow each other.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &conn{db: db}
	// The pool is made before the phase that opened the session starts.
	if err := c.makePool(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

func (dialect) Method() string {
	return "client-paced committer: calibra waits until each commit is due, then sends one autocommitted INSERT ... ON DUPLICATE KEY UPDATE of its committer's one row with width bytes cut from the session's 1 MiB pool of random bytes (the redo the profile's commits wrote); the server syncs the redo log at the commit as innodb_flush_log_at_trx_commit says, concurrent commits sharing a sync; a commit's latency is from its due time to the statement's return, so a late start counts"
}

type conn struct {
	db *sql.DB
	// commit is the prepared statement of one commit, on the session
	// that holds the pool of random bytes (a user variable, made in the
	// server: read from a table at each commit, its pages were page
	// reads the profile never made).
	commit *sql.Stmt
}

// poolBytes is the pool's size: 65,536 MD5 digests.
const poolBytes = 65536 * 16

func (c *conn) Close() {
	if c.commit != nil {
		c.commit.Close()
	}
	c.db.Close()
}

func (c *conn) exec(ctx context.Context, q string, args ...any) error {
	_, err := c.db.ExecContext(ctx, q, args...)
	return err
}

func (c *conn) Drop(ctx context.Context) error {
	return c.exec(ctx, "DROP DATABASE IF EXISTS "+replay.Schema)
}

func (c *conn) Prepare(ctx context.Context) error {
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + replay.Schema,
		"CREATE DATABASE " + replay.Schema,
		"CREATE TABLE " + replay.Schema + ".c (committer INT NOT NULL PRIMARY KEY, payload LONGBLOB NOT NULL) ENGINE=InnoDB",
	} {
		if err := c.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// makePool makes the session's pool of random bytes.
func (c *conn) makePool(ctx context.Context) error {
	for _, q := range []string{"SET SESSION autocommit = 1", "SET SESSION group_concat_max_len = 2097152",
		"SET @calibra_replay_pool = (SELECT GROUP_CONCAT(UNHEX(MD5(RAND())) SEPARATOR '') FROM seq_1_to_65536)"} {
		if err := c.exec(ctx, q); err != nil {
			return fmt.Errorf("make the commits' pool of random bytes: %w", err)
		}
	}
	return nil
}

func (c *conn) Commits(ctx context.Context, committer int, first int64, n int, start time.Time, every time.Duration, width int) ([]time.Duration, error) {
	if c.commit == nil {
		// Prepared once the table exists (Prepare, after the first session).
		var err error
		if c.commit, err = c.db.PrepareContext(ctx, "INSERT INTO "+replay.Schema+".c VALUES (?, SUBSTRING(@calibra_replay_pool, ?, ?)) ON DUPLICATE KEY UPDATE payload = VALUES(payload)"); err != nil {
			return nil, err
		}
	}
	width = min(width, poolBytes-1)
	lats := make([]time.Duration, n)
	for i := range n {
		due := start.Add(every * time.Duration(i))
		if err := replay.SleepUntil(ctx, due); err != nil {
			return nil, err
		}
		at := (first+int64(i))*7919%int64(poolBytes-width) + 1
		if _, err := c.commit.ExecContext(ctx, committer, at, width); err != nil {
			return nil, err
		}
		lats[i] = time.Since(due)
	}
	return lats, nil
}
