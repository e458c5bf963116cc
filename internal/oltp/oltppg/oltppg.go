// Package oltppg is the oltp workload's PostgreSQL dialect: the schema
// and its PL/pgSQL procedures, the COPY load, the transactions, and the
// pg_stat counters read at the window's edges.
package oltppg

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
)

func init() {
	engine.RegisterFor(oltp.Dialects, postgres.Name, func(t *postgres.Target) (oltp.Dialect, error) { return dialect{t}, nil },
		oltp.Supports(oltp.ModeProcedures, oltp.ModeClient, oltp.ModeClientSimple)...)
}

type dialect struct{ t *postgres.Target }

// connect opens a connection with search_path on the schema.
func (d dialect) connect(ctx context.Context) (*pgx.Conn, error) {
	return d.t.ConnectSchema(ctx, oltp.Schema, "calibra")
}

func (d dialect) Connect(ctx context.Context) (oltp.Control, error) {
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	return &control{conn: conn}, nil
}

func (d dialect) Session(ctx context.Context, mode oltp.Mode) (oltp.Session, error) {
	conn, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	switch mode {
	case oltp.ModeClient:
		e := &clientExec{rawSocket: rawSocket{session: session{conn}, pc: conn.PgConn()}}
		if err := e.prepareClient(ctx); err != nil {
			conn.Close(context.Background())
			return nil, err
		}
		return e, nil
	case oltp.ModeClientSimple:
		return newSimpleExec(conn), nil
	}
	e := &procExec{rawSocket: rawSocket{session: session{conn}, pc: conn.PgConn()}}
	if err := e.prepare(ctx); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// Templates is the managed instance's template database; a server reached
// by DSN has none.
func (d dialect) Templates() engine.Resetter {
	if d.t.Managed == nil {
		return nil
	}
	return d.t
}

// CheckRights: a build makes the workload's schema.
func (d dialect) CheckRights(ctx context.Context) error { return d.t.CheckCreate(ctx, oltp.Schema) }
