package postgres

import (
	"context"
	"fmt"

	"github.com/calibra-bench/calibra/internal/fault"
)

// The rights a --dsn role needs, checked before a run directory exists so
// that a missing one is one sentence naming its GRANT (docs/engines.md,
// "Grants"), not a failed run.

// CheckCreate refuses a role that may not create schema in the DSN's
// database (CREATE on the database), unless it owns the schema already.
func (t *Target) CheckCreate(ctx context.Context, schema string) error {
	var ok bool
	var role, db string
	err := t.queryRights(ctx, `SELECT has_database_privilege(current_database(), 'CREATE')
	    OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1 AND pg_has_role(nspowner, 'USAGE')),
	  current_user, current_database()`, []any{schema}, &ok, &role, &db)
	if err != nil || ok {
		return err
	}
	return fault.Input(fmt.Sprintf("run 'GRANT CREATE ON DATABASE %s TO %s' on the server, or use a role that has it", db, role),
		"the --dsn role %s may not create the schema %s in the database %s (it needs CREATE on the database)", role, schema, db)
}

// CheckCheckpoint refuses a role that may not run CHECKPOINT: a superuser
// or, from PostgreSQL 15, a member of pg_checkpoint.
func (t *Target) CheckCheckpoint(ctx context.Context) error {
	var ok bool
	var role string
	err := t.queryRights(ctx, `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
	    OR (EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pg_checkpoint')
	        AND pg_has_role('pg_checkpoint', 'MEMBER')),
	  current_user`, nil, &ok, &role)
	if err != nil || ok {
		return err
	}
	return fault.Input(fmt.Sprintf("run 'GRANT pg_checkpoint TO %s' on the server (PostgreSQL 15 or later; a superuser before), or use a role that has it", role),
		"the --dsn role %s may not run CHECKPOINT, which iocal runs after its load to write the data to the storage before it measures", role)
}

func (t *Target) queryRights(ctx context.Context, q string, args []any, into ...any) error {
	c, err := Connect(ctx, t.ConnConfig())
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if err := c.QueryRow(ctx, q, args...).Scan(into...); err != nil {
		return fmt.Errorf("check the rights of --dsn: %w", err)
	}
	return nil
}
