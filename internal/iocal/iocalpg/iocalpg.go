// Package iocalpg is PostgreSQL's part of the iocal calibration: block
// reads by ctid (TID and TID range scans), COPY FREEZE loads, writes the
// server generates itself (a procedure's INSERT ... SELECT), relation
// sizes, and statistics published on demand.
package iocalpg

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/iocal"
)

func init() {
	engine.RegisterFor(iocal.Dialects, postgres.Name, func(t *postgres.Target) (iocal.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *postgres.Target }

func (d dialect) Connect(ctx context.Context) (iocal.Conn, error) {
	cc := d.t.ConnConfig()
	cc.RuntimeParams["application_name"] = "calibra-iocal"
	// One backend per job: no parallel workers joining a scan.
	cc.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	// The commit test measures a durable commit, whatever the server's
	// default.
	cc.RuntimeParams["synchronous_commit"] = "on"
	c, err := postgres.Connect(ctx, cc)
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

func (d dialect) CheckRights(ctx context.Context) error {
	if err := d.t.CheckCreate(ctx, iocal.Schema); err != nil {
		return err
	}
	return d.t.CheckCheckpoint(ctx)
}

func (dialect) Methods() iocal.Methods {
	return iocal.Methods{
		Random:     "tid array: each call is one query, SELECT count(*) WHERE ctid = ANY($1::tid[]) with the ctids of reads_per_call uniformly random blocks of one table (chosen in proportion to its blocks), one row per block; the backend sorts them and reads each block in turn (TID Scan), so the server issues the reads and the client's share of each is a fraction of a round trip",
		ClientRead: "tid: SELECT by ctid of a uniformly random block of the data, one row per block, so each query reads exactly one block (TID Scan); latency is the query's round trip as the client sees it",
		SeqRead:    "tid range: each query counts the rows of the next 4 MiB of the data (TID Range Scan), chunks handed out in order across the tables",
		SeqWrite:   "server-side bulk insert: each call is one CALL of a PL/pgSQL procedure that, in one transaction, INSERTs ... SELECT into the job's own table (TRUNCATEd first when the next chunk would take it past 256 MiB) one chunk of one-block rows over generate_series, each filler 7,936 bytes cut from a 1 MiB pool of random bytes held in the procedure (WAL-logged, synchronous commit); the server generates every row, so no client work is on the write path; MB/s counts the table blocks committed",
		Commit:     "server-side committer: each call is one CALL of a PL/pgSQL procedure that loops, up to 4096 times or for 100 ms, INSERT of one 16-byte row into a table without index; COMMIT (a real transaction end inside a CALL), synchronous_commit on, so each commit waits for its WAL to be written and flushed; a commit's latency is the backend's clock_timestamp() from before its INSERT to after its COMMIT, no round trip in it",
	}
}

type conn struct{ *pgx.Conn }

func (c conn) Close() { c.Conn.Close(context.Background()) }

// Server: pg_stat_force_next_flush came with PostgreSQL 15.
func (c conn) Server(ctx context.Context) (int, string, error) {
	var blockSize, version int
	err := c.QueryRow(ctx, "SELECT current_setting('block_size')::int, current_setting('server_version_num')::int").Scan(&blockSize, &version)
	if err != nil || version >= 150000 {
		return blockSize, "", err
	}
	return blockSize, "before 15", nil
}

// IOMethod: io_method came with PostgreSQL 18; NULL before.
func (c conn) IOMethod(ctx context.Context) (string, error) {
	var m *string
	if err := c.QueryRow(ctx, "SELECT current_setting('io_method', true)").Scan(&m); err != nil || m == nil {
		return "", err
	}
	return *m, nil
}

func (c conn) exec(ctx context.Context, sql string) error {
	_, err := c.Exec(ctx, sql)
	return err
}

func (c conn) ResetSchema(ctx context.Context) error {
	if err := c.DropSchema(ctx); err != nil {
		return err
	}
	return c.exec(ctx, "CREATE SCHEMA "+iocal.Schema)
}

func (c conn) DropSchema(ctx context.Context) error {
	return c.exec(ctx, "DROP SCHEMA IF EXISTS "+iocal.Schema+" CASCADE")
}

func (c conn) DropTables(ctx context.Context, prefix string) error {
	like := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`).Replace(prefix) + "%"
	rows, err := c.Query(ctx, `SELECT format('TABLE %I.%I', schemaname, tablename) FROM pg_tables WHERE schemaname = $1 AND tablename LIKE $2
	UNION ALL SELECT format('PROCEDURE %s', p.oid::regprocedure) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	  WHERE n.nspname = $1 AND p.proname LIKE $2 AND p.prokind = 'p'`, iocal.Schema, like)
	if err != nil {
		return err
	}
	objects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
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

// Load creates the table in the transaction of its COPY, so that COPY
// FREEZE can write the rows frozen and visible: later reads then never
// dirty a block to set hint bits.
func (c conn) Load(ctx context.Context, table string, rows io.Reader) error {
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "CREATE TABLE "+table+" (id bigint NOT NULL, filler text NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
		return err
	}
	// PLAIN: never compressed or moved out of line, so a row is a block.
	if _, err := tx.Exec(ctx, "ALTER TABLE "+table+" ALTER COLUMN filler SET STORAGE PLAIN"); err != nil {
		return err
	}
	if _, err := c.PgConn().CopyFrom(ctx, rows, "COPY "+table+" FROM STDIN WITH (FREEZE)"); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	return tx.Commit(ctx)
}

// poolBytes is the size of the write test's pool of random bytes: a
// filler starts at a moving offset in it, so that neither the storage's
// compression nor its deduplication shrinks the rows much, and the
// procedure holds it in memory, read once a call.
const poolBytes = 1 << 20

// PrepareWrites creates the pool, random bytes from md5 of random(), and
// the procedure that writes a chunk. A plpgsql variable holds the pool
// detoasted, so each row's filler is a copy from memory, not a read of the
// pool's TOAST chunks.
func (c conn) PrepareWrites(ctx context.Context, pool string) error {
	if err := c.DropTable(ctx, pool); err != nil {
		return err
	}
	err := c.exec(ctx, fmt.Sprintf(`CREATE TABLE %s AS SELECT decode(string_agg(md5(random()::text), ''), 'hex') AS p FROM generate_series(1, %d)`, pool, poolBytes/16))
	if err != nil {
		return err
	}
	return c.exec(ctx, `CREATE OR REPLACE PROCEDURE `+writeRows(pool)+`(tbl regclass, empty boolean, first bigint, n bigint, width int)
LANGUAGE plpgsql AS $$
DECLARE
	pool bytea := (SELECT p FROM `+pool+`);
	wrote bigint;
BEGIN
	IF empty THEN
		EXECUTE format('TRUNCATE %s', tbl);
	END IF;
	EXECUTE format('INSERT INTO %s SELECT i, substring($1 FROM (i * 7919 %% $2)::int + 1 FOR $3) FROM generate_series($4, $4 + $5 - 1) i', tbl)
		USING pool, length(pool) - width, width, first, n;
	GET DIAGNOSTICS wrote = ROW_COUNT;
	IF wrote <> n THEN
		RAISE EXCEPTION 'wrote % rows, not %', wrote, n;
	END IF;
END $$`)
}

// writeRows names the write procedure after the pool.
func writeRows(pool string) string { return pool + "_rows" }

// WriteRows has the procedure write the chunk (after a TRUNCATE where it
// empties the table): the CALL is one transaction, committed
// synchronously at its end. A new table's filler
// is PLAIN, never compressed or moved out of line, so a row is a block.
func (c conn) WriteRows(ctx context.Context, pool string, ch iocal.Chunk) error {
	if ch.Create {
		if err := c.exec(ctx, "CREATE TABLE "+ch.Table+" (id bigint NOT NULL, filler bytea NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
			return err
		}
		if err := c.exec(ctx, "ALTER TABLE "+ch.Table+" ALTER COLUMN filler SET STORAGE PLAIN"); err != nil {
			return err
		}
	}
	_, err := c.Exec(ctx, "CALL "+writeRows(pool)+"($1, $2, $3, $4, $5)", ch.Table, ch.Empty, ch.First, ch.N, int32(ch.Width))
	return err
}

func (c conn) Checkpoint(ctx context.Context) error { return c.exec(ctx, "CHECKPOINT") }

func (c conn) SaveMeta(ctx context.Context, sizeBytes int64, tables int) error {
	return c.exec(ctx, fmt.Sprintf("CREATE TABLE %s.meta AS SELECT %d::bigint AS size_bytes, %d AS tables", iocal.Schema, sizeBytes, tables))
}

func (c conn) Meta(ctx context.Context) (sizeBytes int64, tables int, err error) {
	err = c.QueryRow(ctx, "SELECT size_bytes, tables FROM "+iocal.Schema+".meta").Scan(&sizeBytes, &tables)
	return sizeBytes, tables, err
}

func (c conn) Blocks(ctx context.Context, table string, blockSize int) (int64, error) {
	var bytes int64
	if err := c.QueryRow(ctx, "SELECT pg_relation_size($1)", table).Scan(&bytes); err != nil {
		return 0, err
	}
	return blocksWithRows(ctx, c.Conn, table, bytes/int64(blockSize))
}

// blocksWithRows counts a table's blocks up to the last that holds a row:
// PostgreSQL 16+ extends a relation by many blocks at once during COPY, so
// its last blocks may be empty, and a random read there would find
// nothing. A TID range scan reads only the table's tail.
func blocksWithRows(ctx context.Context, conn *pgx.Conn, table string, size int64) (int64, error) {
	for back := int64(64); ; back *= 8 {
		from := max(size-back, 0)
		var last *string
		q := fmt.Sprintf("SELECT max(ctid)::text FROM %s WHERE ctid >= '(%d,0)'::tid", table, from)
		if err := conn.QueryRow(ctx, q).Scan(&last); err != nil {
			return 0, fmt.Errorf("find the last block of %s: %w", table, err)
		}
		if last != nil {
			var block, item int64
			if _, err := fmt.Sscanf(*last, "(%d,%d)", &block, &item); err != nil {
				return 0, fmt.Errorf("read the ctid %q of %s: %w", *last, table, err)
			}
			return block + 1, nil
		}
		if from == 0 {
			return 0, nil
		}
	}
}

// ReadBlock reads the block's one row by its ctid: a TID Scan.
func (c conn) ReadBlock(ctx context.Context, table string, b int64) error {
	var id int64
	tid := pgtype.TID{BlockNumber: uint32(b), OffsetNumber: 1, Valid: true}
	return c.QueryRow(ctx, "SELECT id FROM "+table+" WHERE ctid = $1", tid).Scan(&id)
}

// ReadRandom counts the rows of the blocks: a TID Scan over a TID array,
// which the backend sorts and reads a block at a time.
func (c conn) ReadRandom(ctx context.Context, table string, blocks []int64) (int64, error) {
	tids := make([]pgtype.TID, len(blocks))
	for i, b := range blocks {
		tids[i] = pgtype.TID{BlockNumber: uint32(b), OffsetNumber: 1, Valid: true}
	}
	var n int64
	err := c.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE ctid = ANY($1::tid[])", tids).Scan(&n)
	return n, err
}

// PrepareCommits creates the table and the procedure that loops the
// commits in the backend: COMMIT inside a CALL ends a real transaction
// (PostgreSQL 11+), flushed as synchronous_commit says, and the
// backend's clock_timestamp() before each INSERT and after each COMMIT
// times it without the round trip.
func (c conn) PrepareCommits(ctx context.Context, table string) error {
	if err := c.DropTable(ctx, table); err != nil {
		return err
	}
	if err := c.exec(ctx, "CREATE TABLE "+table+" (committer int NOT NULL, n bigint NOT NULL) WITH (autovacuum_enabled = off)"); err != nil {
		return err
	}
	return c.exec(ctx, `CREATE OR REPLACE PROCEDURE `+commitLoop(table)+`(committer int, first bigint, n int, within interval, INOUT marks timestamptz[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	stop timestamptz := clock_timestamp() + within;
	t0 timestamptz;
BEGIN
	marks := '{}';
	FOR i IN 0 .. n - 1 LOOP
		t0 := clock_timestamp();
		EXIT WHEN t0 >= stop;
		INSERT INTO `+table+` VALUES (committer, first + i);
		COMMIT;
		marks := marks || t0 || clock_timestamp();
	END LOOP;
END $$`)
}

// commitLoop names the commit procedure of a table after it.
func commitLoop(table string) string { return table + "_loop" }

// Commits calls the loop and returns the span of each commit.
func (c conn) Commits(ctx context.Context, table string, committer int, first int64, n int, within time.Duration) ([]time.Duration, error) {
	var marks []time.Time
	err := c.QueryRow(ctx, "CALL "+commitLoop(table)+"($1, $2, $3, $4)", int32(committer), first, int32(n), within).Scan(&marks)
	lats := make([]time.Duration, len(marks)/2)
	for i := range lats {
		lats[i] = marks[2*i+1].Sub(marks[2*i])
	}
	return lats, err
}

// ReadBlocks counts the blocks' rows: a TID Range Scan.
func (c conn) ReadBlocks(ctx context.Context, table string, from, to int64) error {
	var n int64
	return c.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE ctid >= $1 AND ctid < $2",
		pgtype.TID{BlockNumber: uint32(from), Valid: true}, pgtype.TID{BlockNumber: uint32(to), Valid: true}).Scan(&n)
}

func (c conn) Flush(ctx context.Context) error {
	return c.exec(ctx, "SELECT pg_stat_force_next_flush()")
}
