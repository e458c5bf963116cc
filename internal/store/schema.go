package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema's versions in order: migrations[i] takes the
// database from version i to i+1. A new version is one more entry; an
// entry, once released, never changes (stores in the field are at it).
var migrations = []string{
	// 1: runs, their figures, verdicts and warnings.
	`CREATE TABLE runs (
		id              TEXT PRIMARY KEY,
		dir             TEXT NOT NULL,
		label           TEXT NOT NULL DEFAULT '',
		status          TEXT NOT NULL,
		started_at      TEXT NOT NULL,
		finished_at     TEXT NOT NULL DEFAULT '',
		error           TEXT NOT NULL DEFAULT '',
		command         TEXT NOT NULL DEFAULT '',
		tool_version    TEXT NOT NULL DEFAULT '',
		tool_commit     TEXT NOT NULL DEFAULT '',
		host            TEXT NOT NULL DEFAULT '',
		storage_path    TEXT NOT NULL DEFAULT '',
		storage_fs      TEXT NOT NULL DEFAULT '',
		storage_device  TEXT NOT NULL DEFAULT '',
		engine_name     TEXT NOT NULL DEFAULT '',
		engine_version  TEXT NOT NULL DEFAULT '',
		engine_settings TEXT NOT NULL DEFAULT '{}',
		study           TEXT NOT NULL DEFAULT '',
		study_json      TEXT NOT NULL DEFAULT '{}',
		figure_count    INTEGER NOT NULL DEFAULT 0,
		recorded_at     TEXT NOT NULL
	);
	CREATE INDEX runs_started ON runs (started_at);
	CREATE INDEX runs_label ON runs (label);
	CREATE TABLE figures (
		run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		step_index INTEGER NOT NULL,
		kind       TEXT NOT NULL,
		step       TEXT NOT NULL,
		study_step INTEGER NOT NULL DEFAULT 0,
		repeat     INTEGER NOT NULL DEFAULT 0,
		point      TEXT NOT NULL DEFAULT '',
		metric     TEXT NOT NULL,
		value      REAL NOT NULL,
		unit       TEXT NOT NULL DEFAULT '',
		better     TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX figures_run ON figures (run_id);
	CREATE INDEX figures_metric ON figures (kind, metric);
	CREATE TABLE verdicts (
		run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		step_index INTEGER,
		step       TEXT NOT NULL DEFAULT '',
		kind       TEXT NOT NULL,
		verdict    TEXT NOT NULL,
		ok         INTEGER,
		value      REAL,
		detail     TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX verdicts_run ON verdicts (run_id);
	CREATE TABLE warnings (
		run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		text   TEXT NOT NULL
	);
	CREATE INDEX warnings_run ON warnings (run_id);`,
	// 2: each run's headline figures, for history without a figure query
	// (runs recorded at version 1 show theirs once imported again); the
	// host that recorded the run, whose file system has its directory; a
	// figure's runs read from the index alone; PostgreSQL's verdicts in the
	// order they were written, as SQLite's rowid keeps them.
	`ALTER TABLE runs ADD COLUMN headline TEXT NOT NULL DEFAULT '[]';
	ALTER TABLE runs ADD COLUMN recorded_on TEXT NOT NULL DEFAULT '';
	-- postgres: ALTER TABLE verdicts ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY;
	DROP INDEX figures_metric;
	DROP INDEX runs_started;
	CREATE INDEX figures_metric ON figures (kind, metric, run_id, value);
	CREATE INDEX runs_started_id ON runs (started_at, id);`,
	// 3: each run's results.json and timeseries.csv, gzip-compressed, as
	// read when it was recorded: calibra serve shows them and never opens
	// a run directory (runs recorded earlier have none until imported
	// again).
	`ALTER TABLE runs ADD COLUMN results_gz BLOB;
	ALTER TABLE runs ADD COLUMN timeseries_gz BLOB;`,
	// 4: a person's acceptance of a regressed run into later baselines
	// (who, when); the runs each baseline verdict was made against; the
	// rule that made each run's headline, so that an older rule's are
	// rebuilt (rebuildHeadlines).
	`CREATE TABLE accepted (
		run_id      TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
		accepted_by TEXT NOT NULL,
		accepted_at TEXT NOT NULL
	);
	CREATE TABLE baseline_runs (
		run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		position INTEGER NOT NULL,
		base_id  TEXT NOT NULL
	);
	CREATE INDEX baseline_runs_run ON baseline_runs (run_id);
	ALTER TABLE runs ADD COLUMN headline_rule INTEGER NOT NULL DEFAULT 0;`,
	// 5: a run while it runs (calibra serve's live page): its heartbeat
	// and phase, and each second of its timed load as timeseries.csv's
	// columns give it; both go once the run is recorded as it ended.
	`CREATE TABLE live (
		run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
		heartbeat_at TEXT NOT NULL,
		phase        TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE live_seconds (
		run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		seq     INTEGER NOT NULL,
		at      TEXT NOT NULL,
		figures TEXT NOT NULL,
		PRIMARY KEY (run_id, seq)
	);`,
	// 6: serve's filters and dashboard read indexes, not the runs' rows
	// (which hold their results.json): the statuses, engines and hosts
	// offered, the running runs, and each target's newest run.
	`CREATE INDEX runs_status ON runs (status, started_at);
	CREATE INDEX runs_engine ON runs (engine_name);
	CREATE INDEX runs_target ON runs (host, storage_path, storage_device, engine_name, started_at);`,
}

// SchemaVersion is the version this calibra writes.
var SchemaVersion = len(migrations)

// migrate takes the database to version to, each step in its own
// transaction with the version it reaches, so a store is always at one
// version whatever stops the migration; from is the version it found. A
// store newer than this calibra is refused: its schema may mean things
// this version does not know.
func migrate(ctx context.Context, db *sql.DB, d dialect, to int) (from int, err error) {
	from = -1
	for {
		cur, done, err := migrateOne(ctx, db, d, to)
		if from < 0 {
			from = cur
		}
		if err != nil || done {
			return from, err
		}
	}
}

// migrateOne takes the store one version on from cur, the version it
// found; done is true when it is at version to.
func migrateOne(ctx context.Context, db *sql.DB, d dialect, to int) (cur int, done bool, err error) {
	unreadable := func(err error) error {
		if d.postgres {
			return err // a server that cannot be reached, or a role without rights
		}
		return fmt.Errorf("not a results store calibra can read: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return cur, false, unreadable(err)
	}
	defer tx.Rollback()
	// Read inside the transaction, under the lock: another calibra may
	// have migrated since.
	if l := d.lock(); l != "" {
		if _, err := tx.ExecContext(ctx, l); err != nil {
			return cur, false, err
		}
	}
	var v sql.NullInt64
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return cur, false, unreadable(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM schema_version`).Scan(&v); err != nil {
		return cur, false, unreadable(err)
	}
	cur = int(v.Int64)
	if cur > len(migrations) {
		return cur, false, fmt.Errorf("the store has schema version %d, newer than this calibra's %d; use a newer calibra", cur, len(migrations))
	}
	if cur >= to {
		return cur, true, tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, d.schema(migrations[cur])); err != nil {
		return cur, false, fmt.Errorf("migrate the store to version %d: %w", cur+1, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
		return cur, false, err
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO schema_version (version) VALUES (?)`), cur+1); err != nil {
		return cur, false, err
	}
	return cur, false, tx.Commit()
}
