// Package iocalmy is MariaDB's part of the iocal calibration, InnoDB's
// analogue of CALIBRATE_IO: a block is an InnoDB page, filled by five
// records, read by the primary key of its middle record (one page read a
// lookup), a page at a time or a range of pages, loaded with LOAD DATA
// LOCAL INFILE from the generator's stream, and written by the server from
// the sequence engine's rows for the write test. The calibration data lives
// in a database of its own beside calibra's, so a template of calibra's
// database never copies it.
package iocalmy

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/iocal"
)

func init() {
	engine.RegisterFor(iocal.Dialects, mariadb.Name, func(t *mariadb.Target) (iocal.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *mariadb.Target }

// open is one session on calibra's database: a pool of one connection,
// so that every statement of a job runs in the same session.
func (d dialect) open(ctx context.Context) (*sql.DB, error) {
	cfg := d.t.Config()
	if cfg == nil {
		return nil, errors.New("the MariaDB server has not started")
	}
	// Client-side parameters: one round trip a read, not a server-side
	// prepare, execute and close.
	cfg.InterpolateParams = true
	db := mariadb.Open(cfg)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (d dialect) Connect(ctx context.Context) (iocal.Conn, error) {
	db, err := d.open(ctx)
	if err != nil {
		return nil, err
	}
	return conn{db}, nil
}

// CheckRights: the calibration makes its own database and flushes its
// data to the files (FLUSH TABLES ... FOR EXPORT, which needs RELOAD and
// LOCK TABLES).
func (d dialect) CheckRights(ctx context.Context) error {
	return d.t.CheckGrants(ctx, iocal.Schema, append(slices.Clip(mariadb.Privileges), "LOCK TABLES"), []string{"RELOAD"}, "iocal makes its data in and flushes to the storage")
}

func (dialect) Methods() iocal.Methods {
	return iocal.Methods{
		Random:     "primary key list: each call is one query, SELECT COUNT(*) WHERE k IN (...) over the middle record of each of reads_per_call uniformly random 16 KiB pages of one table (chosen in proportion to its pages), five records a page; InnoDB looks the keys up in order, one clustered-index lookup and one page read each, so the server issues the reads and the client's share of each is a fraction of a round trip",
		ClientRead: "primary key: SELECT of the middle record of a uniformly random 16 KiB page of the data, five records a page (a clustered-index point lookup, one page read: a lookup of a page's first or last record reads its sibling too); latency is the query's round trip as the client sees it",
		SeqRead:    "primary key range: each query counts the records of the next 4 MiB of pages, chunks handed out in order across the tables; InnoDB's linear read-ahead joins in as it would for any scan",
		SeqWrite:   "server-side insert: each job loops INSERT ... SELECT of one chunk of page-filling records over the sequence engine's seq_FROM_to_TO into its own table, TRUNCATEd first when the next chunk would take it past 256 MiB (five records a page, each filler cut from a 1 MiB pool of random bytes, one record of a table the optimizer reads once a statement), in one transaction committed with the redo log synced; the server generates every record, so no client work is on the write path; MB/s counts the table pages committed",
		Commit:     "server-side committer: each call of a stored procedure loops INSERT of one small row into an InnoDB table; COMMIT; FLUSH LOCAL ENGINE LOGS, for up to 4096 commits or 100 ms; the flush waits for the redo log to be written and synced up to the commit when innodb_flush_log_at_trx_commit is 1 (the managed server's setting), which a COMMIT inside a procedure alone does not; latency is the server's SYSDATE(6) from before the INSERT to after the flush, no round trip in it",
	}
}

type conn struct{ db *sql.DB }

func (c conn) Close() { c.db.Close() }

// Server: InnoDB's status counters are global and current, so there is
// nothing to publish.
func (c conn) Server(ctx context.Context) (int, string, error) {
	var page int
	if err := c.db.QueryRowContext(ctx, "SELECT @@innodb_page_size").Scan(&page); err != nil {
		return 0, "", err
	}
	if page > 16384 {
		// The layout (perPage, partOfFiller) was measured on 16 KiB pages.
		return 0, "", fault.Input("calibrate a server with innodb_page_size of 16k or less",
			"the server's innodb_page_size is %d: iocal's layout of five records a page is sized for pages of 16 KiB or less", page)
	}
	return page, "", nil
}

func (c conn) exec(ctx context.Context, q string, args ...any) error {
	_, err := c.db.ExecContext(ctx, q, args...)
	return err
}

func (c conn) ResetSchema(ctx context.Context) error {
	if err := c.DropSchema(ctx); err != nil {
		return err
	}
	return c.exec(ctx, "CREATE DATABASE "+iocal.Schema)
}

func (c conn) DropSchema(ctx context.Context) error {
	return c.exec(ctx, "DROP DATABASE IF EXISTS "+iocal.Schema)
}

func (c conn) DropTables(ctx context.Context, prefix string) error {
	like := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`).Replace(prefix) + "%"
	rows, err := c.db.QueryContext(ctx, `SELECT 'TABLE', TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?
		UNION ALL SELECT 'PROCEDURE', ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_NAME LIKE ? AND ROUTINE_TYPE = 'PROCEDURE'`,
		iocal.Schema, like, iocal.Schema, like)
	if err != nil {
		return err
	}
	var objects []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			rows.Close()
			return err
		}
		objects = append(objects, kind+" "+iocal.Schema+".`"+name+"`")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, o := range objects {
		if err := c.exec(ctx, "DROP "+o); err != nil {
			return err
		}
	}
	return nil
}

func (c conn) DropTable(ctx context.Context, table string) error {
	return c.exec(ctx, "DROP TABLE IF EXISTS "+table)
}

// loads names each LOAD DATA's reader to the driver.
var loads atomic.Int64

// Load streams the rows, each split into perPage records, through LOAD
// DATA LOCAL INFILE in one transaction. In key order InnoDB fills each
// page before it starts the next: after the first page (see firstPage),
// each page holds the records of one row.
func (c conn) Load(ctx context.Context, table string, rows io.Reader) error {
	if err := c.createTable(ctx, table); err != nil {
		return err
	}
	name := fmt.Sprintf("calibra-iocal-%d", loads.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return &parts{in: bufio.NewReaderSize(rows, 64<<10)} })
	defer mysql.DeregisterReaderHandler(name)
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET unique_checks = 0"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE "+table+" FIELDS TERMINATED BY '\\t' (k, f)"); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	return tx.Commit()
}

// createTable creates a table of the layout below. VARBINARY: one byte a
// letter; DYNAMIC keeps a record under half a page in the page; no
// statistics recalculated to disturb the reads.
func (c conn) createTable(ctx context.Context, table string) error {
	return c.exec(ctx, "CREATE TABLE "+table+" (k BIGINT NOT NULL PRIMARY KEY, f VARBINARY(16384) NOT NULL) ENGINE=InnoDB ROW_FORMAT=DYNAMIC STATS_AUTO_RECALC=0")
}

// poolBytes is the size of the write test's pool of random bytes: a
// filler starts at a moving offset in it, so that neither the storage's
// compression nor its deduplication shrinks the records much.
const poolBytes = 1 << 20

// PrepareWrites creates the pool, random bytes from MD5 of RAND() over
// the sequence engine (which the write test's records come from too), in
// one record found by its primary key: a const table to the optimizer,
// read once a statement, whose blob each record's SUBSTRING reads in
// place. A user variable instead costs a copy of the whole pool a record
// (36 µs, measured on 10.11).
func (c conn) PrepareWrites(ctx context.Context, pool string) error {
	if err := c.DropTable(ctx, pool); err != nil {
		return err
	}
	if err := c.exec(ctx, "CREATE TABLE "+pool+" (id INT NOT NULL PRIMARY KEY, p LONGBLOB NOT NULL) ENGINE=InnoDB"); err != nil {
		return err
	}
	// The hex digits of the pool, before UNHEX, in one GROUP_CONCAT.
	if err := c.exec(ctx, fmt.Sprintf("SET SESSION group_concat_max_len = %d", 2*poolBytes)); err != nil {
		return err
	}
	return c.exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT 1, UNHEX(GROUP_CONCAT(MD5(RAND()) SEPARATOR '')) FROM %s.seq_1_to_%d",
		pool, iocal.Schema, poolBytes/16))
}

// WriteRows has the server insert the chunk's records (after a TRUNCATE
// where it empties the table) from the sequence engine's rows, perPage a block, in key order, each filler cut from the
// pool. The INSERT is one transaction (autocommit), committed with the
// redo log synced (innodb_flush_log_at_trx_commit).
func (c conn) WriteRows(ctx context.Context, pool string, ch iocal.Chunk) error {
	var err error
	switch {
	case ch.Create:
		err = c.createTable(ctx, ch.Table)
	case ch.Empty:
		err = c.exec(ctx, "TRUNCATE TABLE "+ch.Table)
	}
	if err != nil {
		return err
	}
	part := partOfFiller(ch.Width)
	from, to := perPage*ch.First, perPage*(ch.First+ch.N)-1
	res, err := c.db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (k, f) SELECT seq, SUBSTRING(pool.p, seq * 7919 %% (LENGTH(pool.p) - %d) + 1, %d) FROM %s.seq_%d_to_%d, %s pool WHERE pool.id = 1",
		ch.Table, part, part, iocal.Schema, from, to, pool))
	if err != nil {
		return fmt.Errorf("write %s: %w", ch.Table, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != to-from+1 {
		return fmt.Errorf("write %s: the server wrote %d records, not %d (%v)", ch.Table, n, to-from+1, err)
	}
	return nil
}

// The layout of a table: perPage records a page, after a first page of
// firstPage, as InnoDB's first split leaves half the root's records
// there and later ones, in key order, start a page at the new record.
// InnoDB reads a second leaf page for a lookup of the first or the last
// record of a page (its left or right sibling), measured on 10.11 from a
// cold buffer pool, so with two records a page every lookup read two
// pages. A block is read by the key of its page's middle record, two
// records from either end: one page read, as long as the layout shifts
// by no more than one record.
const (
	perPage   = 5
	firstPage = perPage / 2
)

// partOfFiller is the share of a row's filler each record takes: five
// records of 11/63 of a block's filler (2,816 bytes of 16,128), with
// InnoDB's per-record overhead, fill the 15/16 of a page that InnoDB's
// bulk load fills (5 × 2,844 = 14,220 bytes a page, measured).
func partOfFiller(filler int) int { return filler * 11 / 63 }

// blockKey is the key of the middle record of block b's page.
func blockKey(b int64) int64 { return firstPage + perPage*b + perPage/2 }

// parts turns each line "id\tfiller" into perPage records, each a part
// of the filler (partOfFiller), keyed by the table's own record count (from 0), so
// that block b is page b of whichever table, whatever ids its rows had.
type parts struct {
	in  *bufio.Reader
	n   int64
	buf []byte
	err error
}

func (h *parts) Read(p []byte) (int, error) {
	for len(h.buf) == 0 {
		if h.err != nil {
			return 0, h.err
		}
		line, err := h.in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, errors.New("a calibration row is longer than 64 KiB")
		}
		h.err = err
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(line) == 0 {
			continue
		}
		_, filler, ok := bytes.Cut(line, []byte("\t"))
		if !ok {
			return 0, fmt.Errorf("a calibration row starts with %q, not an id and a tab", line[:min(len(line), 20)])
		}
		part := partOfFiller(len(filler))
		h.buf = h.buf[:0]
		for i := range perPage {
			h.buf = strconv.AppendInt(h.buf, h.n, 10)
			h.n++
			h.buf = append(h.buf, '\t')
			h.buf = append(h.buf, filler[i*part:(i+1)*part]...)
			h.buf = append(h.buf, '\n')
		}
	}
	n := copy(p, h.buf)
	h.buf = h.buf[n:]
	return n, nil
}

// Checkpoint writes the calibration tables' changed pages to their files:
// FLUSH TABLES ... FOR EXPORT waits for their purge and flushes them, so
// that the reads after it neither find them in the buffer pool nor write.
func (c conn) Checkpoint(ctx context.Context) error {
	rows, err := c.db.QueryContext(ctx, "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND ENGINE = 'InnoDB'", iocal.Schema)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, iocal.Schema+".`"+t+"`")
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(tables) == 0 {
		return err
	}
	// Statistics of the loaded tables: without them the optimizer costs an
	// IN list of more keys than eq_range_index_dive_limit from the empty
	// table's and scans the whole index instead (the random test).
	if _, err := c.db.ExecContext(ctx, "ANALYZE TABLE "+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("analyze the calibration data: %w", err)
	}
	// The lock is the session's: one connection holds it and frees it.
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "FLUSH TABLES "+strings.Join(tables, ", ")+" FOR EXPORT"); err != nil {
		return fmt.Errorf("flush the calibration data to its files: %w", err)
	}
	_, err = conn.ExecContext(ctx, "UNLOCK TABLES")
	return err
}

func (c conn) SaveMeta(ctx context.Context, sizeBytes int64, tables int) error {
	if err := c.exec(ctx, "CREATE TABLE "+iocal.Schema+".meta (size_bytes BIGINT NOT NULL, tables INT NOT NULL) ENGINE=InnoDB"); err != nil {
		return err
	}
	return c.exec(ctx, "INSERT INTO "+iocal.Schema+".meta VALUES (?, ?)", sizeBytes, tables)
}

func (c conn) Meta(ctx context.Context) (sizeBytes int64, tables int, err error) {
	err = c.db.QueryRowContext(ctx, "SELECT size_bytes, tables FROM "+iocal.Schema+".meta").Scan(&sizeBytes, &tables)
	return sizeBytes, tables, err
}

// Blocks is the full pages after the first.
func (c conn) Blocks(ctx context.Context, table string, _ int) (int64, error) {
	var last sql.NullInt64
	if err := c.db.QueryRowContext(ctx, "SELECT MAX(k) FROM "+table).Scan(&last); err != nil {
		return 0, err
	}
	if !last.Valid {
		return 0, nil
	}
	return max(last.Int64+1-firstPage, 0) / perPage, nil
}

// ReadBlock reads the middle record of block b's page: one
// clustered-index lookup, one page read.
func (c conn) ReadBlock(ctx context.Context, table string, b int64) error {
	var k int64
	return c.db.QueryRowContext(ctx, "SELECT k FROM "+table+" WHERE k = ?", blockKey(b)).Scan(&k)
}

// ReadRandom counts the middle records of the pages: InnoDB
// looks an IN list's keys up in order, a clustered-index lookup each. The
// keys are literals, built here: the driver would interpolate them alike.
// FORCE INDEX: past eq_range_index_dive_limit (200) keys the optimizer
// estimates from statistics (Checkpoint has them computed), and without
// them chose a full scan (682 rows/s for 9,855 device reads/s, read-ahead
// at 740 MB/s, measured on 10.11).
func (c conn) ReadRandom(ctx context.Context, table string, blocks []int64) (int64, error) {
	q := make([]byte, 0, 64+len(blocks)*10)
	q = append(q, "SELECT COUNT(*) FROM "+table+" FORCE INDEX (PRIMARY) WHERE k IN ("...)
	for i, b := range blocks {
		if i > 0 {
			q = append(q, ',')
		}
		q = strconv.AppendInt(q, blockKey(b), 10)
	}
	q = append(q, ')')
	var n int64
	err := c.db.QueryRowContext(ctx, string(q)).Scan(&n)
	return n, err
}

// PrepareCommits creates the table and the procedure that loops the
// commits in the server. A COMMIT inside a stored procedure need not wait
// for its redo flush (in MariaDB 10.6+ it may complete in another thread
// while the client waits at the end of the CALL: with four committers 60
// commits shared each redo write, measured on 10.11), so each COMMIT is followed
// by FLUSH LOCAL ENGINE LOGS, which waits until the redo log is written
// and synced up to the current LSN, as innodb_flush_log_at_trx_commit
// says, or flushes it itself: each commit is durable before the next
// starts. SYSDATE(6), the time at its call, times each commit from before
// its INSERT until that flush returned.
func (c conn) PrepareCommits(ctx context.Context, table string) error {
	loop := commitLoop(table)
	if err := c.DropTable(ctx, table); err != nil {
		return err
	}
	if err := c.exec(ctx, "DROP PROCEDURE IF EXISTS "+loop); err != nil {
		return err
	}
	// FLUSH needs RELOAD, which only the server resolves: ask first.
	err := c.exec(ctx, "FLUSH LOCAL ENGINE LOGS")
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) && myErr.Number == 1227 {
		return fault.Input("grant the --dsn account RELOAD on *.*, or leave wal out of --tests",
			"the commit test waits for each commit's redo flush with FLUSH LOCAL ENGINE LOGS, which needs the RELOAD privilege: %s", myErr.Message)
	}
	if err != nil {
		return err
	}
	if err := c.exec(ctx, "CREATE TABLE "+table+" (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, committer INT NOT NULL, n BIGINT NOT NULL) ENGINE=InnoDB STATS_AUTO_RECALC=0"); err != nil {
		return err
	}
	return c.exec(ctx, `CREATE PROCEDURE `+loop+`(committer INT, first BIGINT, n INT, within_us BIGINT)
BEGIN
	DECLARE stop DATETIME(6) DEFAULT SYSDATE(6) + INTERVAL within_us MICROSECOND;
	DECLARE t0 DATETIME(6);
	DECLARE i INT DEFAULT 0;
	DECLARE spans MEDIUMTEXT DEFAULT '';
	commits: WHILE i < n DO
		SET t0 = SYSDATE(6);
		IF t0 >= stop THEN
			LEAVE commits;
		END IF;
		INSERT INTO `+table+` (committer, n) VALUES (committer, first + i);
		COMMIT;
		FLUSH LOCAL ENGINE LOGS;
		SET spans = CONCAT(spans, TIMESTAMPDIFF(MICROSECOND, t0, SYSDATE(6)), ' ');
		SET i = i + 1;
	END WHILE;
	SELECT spans;
END`)
}

// commitLoop names the commit procedure of a table after it.
func commitLoop(table string) string { return table + "_loop" }

// Commits calls the loop and returns the span of each commit.
func (c conn) Commits(ctx context.Context, table string, committer int, first int64, n int, within time.Duration) ([]time.Duration, error) {
	var spans string
	err := c.db.QueryRowContext(ctx, "CALL "+commitLoop(table)+"(?, ?, ?, ?)", committer, first, n, within.Microseconds()).Scan(&spans)
	if err != nil {
		return nil, err
	}
	return parseSpans(spans)
}

// parseSpans reads the loop's spans, microseconds separated by spaces. A
// commit waits for a device flush, so a call whose commits all took no
// time ran on a server whose SYSDATE() is the statement's start
// (--sysdate-is-now).
func parseSpans(spans string) ([]time.Duration, error) {
	fields := strings.Fields(spans)
	lats := make([]time.Duration, len(fields))
	var sum time.Duration
	for i, f := range fields {
		us, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the commit loop returned %q, not microseconds", f)
		}
		lats[i] = time.Duration(us) * time.Microsecond
		sum += lats[i]
	}
	if len(lats) > 0 && sum == 0 {
		return nil, errors.New("the server's SYSDATE() does not move within a statement (started with --sysdate-is-now?), so it cannot time its commits")
	}
	return lats, nil
}

// ReadBlocks counts the records of pages [from, to): a range scan of the
// clustered index.
func (c conn) ReadBlocks(ctx context.Context, table string, from, to int64) error {
	var n int64
	return c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+" WHERE k >= ? AND k < ?", firstPage+perPage*from, firstPage+perPage*to).Scan(&n)
}

// Flush has nothing to do: InnoDB's counters are current.
func (c conn) Flush(context.Context) error { return nil }
