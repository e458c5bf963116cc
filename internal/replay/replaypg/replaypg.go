// Package replaypg is PostgreSQL's commit path for the profile replay: a
// PL/pgSQL procedure that paces its commits in the backend, as iocal's
// commit test loops them, each carrying a payload of random bytes so
// that its WAL is the profile's. The payload is a transactional WAL
// message (pg_logical_emit_message), not a row: an inserted row extends
// its table, and PostgreSQL before 16 counts each new page as a page
// read, which made the replay's page reads a commit's, not the profile's.
package replaypg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/replay"
)

func init() {
	engine.RegisterFor(replay.Dialects, postgres.Name, func(t *postgres.Target) (replay.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *postgres.Target }

func (d dialect) Connect(ctx context.Context) (replay.Conn, error) {
	cc := d.t.ConnConfig()
	cc.RuntimeParams["application_name"] = "calibra-replay"
	cc.RuntimeParams["synchronous_commit"] = "on"
	c, err := postgres.Connect(ctx, cc)
	if err != nil {
		return nil, err
	}
	return conn{c}, nil
}

func (dialect) Method() string {
	return "server-side paced committer: each call is one CALL of a PL/pgSQL procedure that, for each commit in turn, waits until it is due (pg_sleep), writes a transactional WAL message of width bytes cut from a 1 MiB pool of random bytes (pg_logical_emit_message: the WAL the profile's commits wrote, and no page of any table) and COMMITs inside the CALL, synchronous_commit on; a commit's latency is the backend's clock_timestamp() from its due time to after its COMMIT, so a late start counts"
}

type conn struct{ *pgx.Conn }

func (c conn) Close() { c.Conn.Close(context.Background()) }

func (c conn) exec(ctx context.Context, sql string) error {
	_, err := c.Exec(ctx, sql)
	return err
}

func (c conn) Drop(ctx context.Context) error {
	return c.exec(ctx, "DROP SCHEMA IF EXISTS "+replay.Schema+" CASCADE")
}

func (c conn) Prepare(ctx context.Context) error {
	for _, sql := range []string{
		"DROP SCHEMA IF EXISTS " + replay.Schema + " CASCADE",
		"CREATE SCHEMA " + replay.Schema,
		"CREATE TABLE " + replay.Schema + ".pool AS SELECT decode(string_agg(md5(random()::text), ''), 'hex') AS p FROM generate_series(1, 65536)",
		`CREATE PROCEDURE ` + replay.Schema + `.paced(committer int, first bigint, n int, start timestamptz, every interval, width int, INOUT lats float8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	pool bytea := (SELECT p FROM ` + replay.Schema + `.pool);
	due timestamptz;
	now_ timestamptz;
BEGIN
	lats := '{}';
	FOR i IN 0 .. n - 1 LOOP
		due := start + every * i;
		now_ := clock_timestamp();
		IF now_ < due THEN
			PERFORM pg_sleep(extract(epoch FROM due - now_));
		END IF;
		PERFORM pg_logical_emit_message(true, 'calibra', substring(pool FROM ((first + i) * 7919 % (length(pool) - width))::int + 1 FOR width));
		COMMIT;
		lats := lats || extract(epoch FROM clock_timestamp() - due)::float8;
	END LOOP;
END $$`,
	} {
		if err := c.exec(ctx, sql); err != nil {
			return err
		}
	}
	return nil
}

func (c conn) Commits(ctx context.Context, committer int, first int64, n int, start time.Time, every time.Duration, width int) ([]time.Duration, error) {
	var secs []float64
	err := c.QueryRow(ctx, "CALL "+replay.Schema+".paced($1, $2, $3, $4, $5, $6)", int32(committer), first, int32(n), start, every, int32(width)).Scan(&secs)
	lats := make([]time.Duration, len(secs))
	for i, s := range secs {
		lats[i] = time.Duration(s * float64(time.Second))
	}
	return lats, err
}
