// Package replaymy is MariaDB's commit path for the profile replay: a
// stored procedure that paces its commits in the server, as iocal's
// commit test loops them, each updating its committer's one row with a
// payload cut from a pool of random bytes, so that the redo log a commit
// writes is the profile's. An update of one row a committer, not an
// insert: the table stays a few pages, where inserts at the profile's
// redo rate would grow it by megabytes a second.
package replaymy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/fault"
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
	// One session: the procedure's calls follow each other on it.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return &conn{db: db}, nil
}

func (dialect) Method() string {
	return "server-side paced committer: each call is one CALL of a stored procedure that, for each commit in turn, waits until it is due (SLEEP), updates its committer's one row with width bytes cut from the session's 1 MiB pool of random bytes (the redo the profile's commits wrote), COMMITs and waits for the redo log's sync with FLUSH LOCAL ENGINE LOGS (a COMMIT inside a procedure need not wait for it); a commit's latency is the server's SYSDATE(6) from its due time to after that flush, so a late start counts"
}

type conn struct {
	db *sql.DB
	// pooled: the session holds its pool of random bytes, made in the
	// server (a user variable): read from a table at each call, its
	// pages were page reads the profile never made.
	pooled bool
}

func (c *conn) Close() { c.db.Close() }

func (c *conn) exec(ctx context.Context, q string, args ...any) error {
	_, err := c.db.ExecContext(ctx, q, args...)
	return err
}

func (c *conn) Drop(ctx context.Context) error {
	return c.exec(ctx, "DROP DATABASE IF EXISTS "+replay.Schema)
}

func (c *conn) Prepare(ctx context.Context) error {
	// FLUSH needs RELOAD, which only the server resolves: ask first.
	var myErr *mysql.MySQLError
	if err := c.exec(ctx, "FLUSH LOCAL ENGINE LOGS"); errors.As(err, &myErr) && myErr.Number == 1227 {
		return fault.Input("grant the --dsn account RELOAD on *.*",
			"the replay waits for each commit's redo sync with FLUSH LOCAL ENGINE LOGS, which needs the RELOAD privilege: %s", myErr.Message)
	} else if err != nil {
		return err
	}
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + replay.Schema,
		"CREATE DATABASE " + replay.Schema,
		"CREATE TABLE " + replay.Schema + ".c (committer INT NOT NULL PRIMARY KEY, payload LONGBLOB NOT NULL) ENGINE=InnoDB",
		`CREATE PROCEDURE ` + replay.Schema + `.paced(committer INT, first BIGINT, n INT, start_us BIGINT, every_us BIGINT, width INT)
BEGIN
	DECLARE pool LONGBLOB DEFAULT @calibra_replay_pool;
	DECLARE due, now_ BIGINT;
	DECLARE i INT DEFAULT 0;
	DECLARE spans MEDIUMTEXT DEFAULT '';
	WHILE i < n DO
		SET due = start_us + every_us * i;
		SET now_ = UNIX_TIMESTAMP(SYSDATE(6)) * 1000000;
		IF now_ < due THEN
			DO SLEEP((due - now_) / 1000000);
		END IF;
		START TRANSACTION;
		INSERT INTO ` + replay.Schema + `.c VALUES (committer, SUBSTRING(pool, (first + i) * 7919 % (LENGTH(pool) - width) + 1, width))
			ON DUPLICATE KEY UPDATE payload = VALUES(payload);
		COMMIT;
		FLUSH LOCAL ENGINE LOGS;
		SET spans = CONCAT(spans, UNIX_TIMESTAMP(SYSDATE(6)) * 1000000 - due, ' ');
		SET i = i + 1;
	END WHILE;
	SELECT spans;
END`,
	} {
		if err := c.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (c *conn) Commits(ctx context.Context, committer int, first int64, n int, start time.Time, every time.Duration, width int) ([]time.Duration, error) {
	if !c.pooled {
		for _, q := range []string{"SET SESSION group_concat_max_len = 2097152",
			"SET @calibra_replay_pool = (SELECT GROUP_CONCAT(UNHEX(MD5(RAND())) SEPARATOR '') FROM seq_1_to_65536)"} {
			if err := c.exec(ctx, q); err != nil {
				return nil, fmt.Errorf("make the commits' pool of random bytes: %w", err)
			}
		}
		c.pooled = true
	}
	var spans string
	err := c.db.QueryRowContext(ctx, "CALL "+replay.Schema+".paced(?, ?, ?, ?, ?, ?)", committer, first, n, start.UnixMicro(), every.Microseconds(), width).Scan(&spans)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(spans)
	lats := make([]time.Duration, len(fields))
	for i, f := range fields {
		us, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("the replay's commit loop returned %q, not microseconds", f)
		}
		lats[i] = time.Duration(us * float64(time.Microsecond))
	}
	return lats, nil
}
