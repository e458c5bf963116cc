// Package oltpmy is the oltp workload's MariaDB (and MySQL) dialect: the
// InnoDB schema and its stored procedures, the LOAD DATA load, the
// transactions, and the counters read at the window's edges.
//
// The tables live in calibra's own database (the target's), not a schema
// of their own as on PostgreSQL: a database is MariaDB's schema, and the
// template the engine keeps for resets is a copy of calibra's database.
package oltpmy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/oltp"
)

func init() {
	engine.RegisterFor(oltp.Dialects, mariadb.Name, func(t *mariadb.Target) (oltp.Dialect, error) { return dialect{t}, nil },
		oltp.Supports(oltp.ModeProcedures, oltp.ModeClientSimple)...)
}

type dialect struct{ t *mariadb.Target }

// isolation is every session's: READ COMMITTED, PostgreSQL's default and
// so what oltppg runs, so the engines compare on the same isolation; on
// InnoDB it also takes no gap locks, which at REPEATABLE READ (InnoDB's
// default) make Delivery's and New-Order's ends of new_order block each
// other. The transactions' locking reads (UPDATE, FOR UPDATE) see the
// latest committed rows at either level.
const isolation = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"

// conn is one pinned connection of its own small pool.
type conn struct {
	db *sql.DB
	*sql.Conn
}

func (c conn) close() {
	c.Conn.Close()
	c.db.Close()
}

// connect opens one connection on calibra's database at the workload's
// isolation level.
func (d dialect) connect(ctx context.Context) (conn, error) {
	cfg := d.t.Config()
	if cfg == nil {
		return conn{}, fmt.Errorf("the MariaDB target has not been started")
	}
	db := mariadb.Open(cfg)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return conn{}, err
	}
	if _, err := c.ExecContext(ctx, isolation); err != nil {
		c.Close()
		db.Close()
		return conn{}, err
	}
	return conn{db, c}, nil
}

func (d dialect) Connect(ctx context.Context) (oltp.Control, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	return &control{conn: c, t: d.t}, nil
}

func (d dialect) Session(ctx context.Context, mode oltp.Mode) (oltp.Session, error) {
	c, err := d.connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &session{conn: c, galera: d.t.GaleraNode()}
	var sess oltp.Session
	switch mode {
	case oltp.ModeClientSimple:
		sess, err = newClientExec(ctx, s)
	case oltp.ModeProcedures:
		sess, err = &procExec{s}, s.prepare(ctx, procStatements)
	default:
		err = fmt.Errorf("MariaDB runs the transactions as procedures or client-simple, not %s", mode)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return sess, nil
}

// Templates is the managed instance's loaded template; a server reached
// by DSN has none.
func (d dialect) Templates() engine.Resetter {
	if d.t.Managed == nil {
		return nil
	}
	return d.t
}

// mysqlErr is err's server error, if it is one.
func mysqlErr(err error) (*mysql.MySQLError, bool) {
	var e *mysql.MySQLError
	ok := errors.As(err, &e)
	return e, ok
}
