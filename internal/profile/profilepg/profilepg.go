// Package profilepg is PostgreSQL's part of calibra profile: the
// counters of pg_stat_database, pg_stat_wal, pg_stat_io (16+) or
// pg_stat_bgwriter (15), and pg_stat_activity's active sessions, read in
// read-only sessions.
package profilepg

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/profile"
)

func init() {
	engine.RegisterFor(profile.Dialects, postgres.Name, func(t *postgres.Target) (profile.Dialect, error) { return dialect{t}, nil })
}

type dialect struct{ t *postgres.Target }

func (d dialect) Connect(ctx context.Context) (profile.Conn, error) {
	cc := d.t.ConnConfig()
	cc.RuntimeParams["application_name"] = "calibra-profile"
	cc.RuntimeParams["default_transaction_read_only"] = "on"
	c, err := postgres.Connect(ctx, cc)
	if err != nil {
		return nil, err
	}
	var version int
	if err := c.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		c.Close(ctx)
		return nil, err
	}
	return conn{c, version}, nil
}

// CheckGrants: every view a capture reads is open to any role but one
// column, pg_stat_activity's state of other roles' sessions, which needs
// pg_read_all_stats (in pg_monitor); a superuser is a member of both.
func (d dialect) CheckGrants(ctx context.Context) error {
	c, err := postgres.Connect(ctx, d.t.ConnConfig())
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	var ok bool
	var role string
	if err := c.QueryRow(ctx, "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER'), current_user").Scan(&ok, &role); err != nil {
		return fmt.Errorf("check the grants of the profile's role: %w", err)
	}
	if !ok {
		return fault.Input(fmt.Sprintf("run 'GRANT pg_monitor TO %s' on the server (read-only statistics), or use a role that has it", role),
			"the role %s cannot see other sessions' activity, which calibra profile samples (it needs pg_read_all_stats, part of pg_monitor)", role)
	}
	return nil
}

type conn struct {
	*pgx.Conn
	version int
}

func (c conn) Close() { c.Conn.Close(context.Background()) }

func (c conn) Counters(ctx context.Context) (profile.Counters, error) {
	var k profile.Counters
	k.Missing = map[string]string{}
	err := c.QueryRow(ctx, "SELECT xact_commit, blks_read, blks_hit FROM pg_stat_database WHERE datname = current_database()").Scan(&k.Commits, &k.PageReads, &k.PageHits)
	if err != nil {
		return k, fmt.Errorf("read pg_stat_database: %w", err)
	}
	// pg_stat_wal counts the WAL's syncs up to 17; 18 moved them to
	// pg_stat_io's wal object.
	syncs := "SELECT wal_sync FROM pg_stat_wal"
	if c.version >= 180000 {
		syncs = "SELECT sum(fsyncs)::bigint FROM pg_stat_io WHERE object = 'wal'"
	}
	if err := c.QueryRow(ctx, "SELECT wal_bytes::bigint, ("+syncs+") FROM pg_stat_wal").Scan(&k.WALBytes, &k.WALSyncs); err != nil {
		return k, fmt.Errorf("read pg_stat_wal: %w", err)
	}
	if c.version < 160000 {
		err = c.QueryRow(ctx, "SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter").Scan(&k.PageWrites)
		k.Missing["shape.sequential_share_pct"] = "PostgreSQL before 16 has no pg_stat_io to tell bulk reads from single ones"
	} else {
		err = c.QueryRow(ctx, `SELECT sum(writes)::bigint, sum(reads) FILTER (WHERE context = 'bulkread')::bigint, sum(reads)::bigint
			FROM pg_stat_io WHERE object = 'relation'`).Scan(&k.PageWrites, &k.SeqReads, &k.IOReads)
	}
	if err != nil {
		return k, fmt.Errorf("read the page writes: %w", err)
	}
	return k, nil
}

func (c conn) Active(ctx context.Context) (int, error) {
	var n int
	err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
		AND backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&n)
	return n, err
}

func (c conn) Server(ctx context.Context) (profile.Server, error) {
	var s profile.Server
	err := c.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('block_size')::int,
		pg_database_size(current_database()), pg_size_bytes(current_setting('shared_buffers'))`).Scan(&s.Version, &s.PageBytes, &s.DataBytes, &s.CacheBytes)
	return s, err
}
