// Package oltppg is the oltp workload's PostgreSQL dialect: the schema
// and its PL/pgSQL procedures, the COPY load, the transactions, and the
// pg_stat counters read at the window's edges.
package oltppg

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/oltp"
	"github.com/calibra-bench/calibra/internal/oltp/tpcc"
)

func init() {
	engine.RegisterFor(oltp.Dialects, postgres.Name, func(t *postgres.Target) (oltp.Dialect, error) { return dialect{t}, nil })
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
		return &clientExec{session: session{conn}}, nil
	case oltp.ModeClientSimple:
		return &simpleExec{session{conn}}, nil
	}
	e := &procExec{session: session{conn}, pc: conn.PgConn()}
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

func (d dialect) Loader(ctx context.Context, n int) (oltp.Loader, error) {
	conns, err := postgres.OpenConns(ctx, n, d.connect)
	if err != nil {
		postgres.CloseConns(conns)
		return nil, err
	}
	return &loader{conns: conns}, nil
}

// loader COPYs the generated rows, one batch per COPY.
type loader struct{ conns []*pgx.Conn }

func (l *loader) Load(ctx context.Context, batches []oltp.Batch, fill func([]byte, oltp.Batch) []byte, done func(oltp.Batch)) error {
	bufs := make([][]byte, len(l.conns))
	return postgres.OnConns(ctx, l.conns, batches, func(ctx context.Context, w int, conn *pgx.Conn, b oltp.Batch) error {
		bufs[w] = fill(bufs[w][:0], b)
		sql := "COPY " + b.Table.String() + " (" + strings.Join(b.Table.Columns(), ", ") + ") FROM STDIN"
		if _, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(bufs[w]), sql); err != nil {
			return fmt.Errorf("load %s batch %d: %w", b.Table, b.N, err)
		}
		done(b)
		return nil
	})
}

func (l *loader) Finish(ctx context.Context, phase func(string)) (oltp.LoadTail, error) {
	var vacuums []string
	for _, tb := range tpcc.Tables() {
		vacuums = append(vacuums, "VACUUM (FREEZE, ANALYZE) "+tb.String())
	}
	tail, err := postgres.FinishLoad(ctx, l.conns, oltp.Schema, indexDDL, vacuums, phase)
	return oltp.LoadTail{IndexS: tail.IndexS, VacuumS: tail.VacuumS, Bytes: tail.Bytes}, err
}

func (l *loader) Close() { postgres.CloseConns(l.conns) }
