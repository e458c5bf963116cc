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
	cfg, err := d.config()
	if err != nil {
		return conn{}, err
	}
	return open(ctx, cfg)
}

func (d dialect) config() (*mysql.Config, error) {
	cfg := d.t.Config()
	if cfg == nil {
		return nil, fmt.Errorf("the MariaDB target has not been started")
	}
	return cfg, nil
}

// open opens one connection on cfg at the workload's isolation level.
func open(ctx context.Context, cfg *mysql.Config) (conn, error) {
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

// Session opens a user's connection; in procedures mode (but on a Galera
// node) through a tap, for the polling driver to take over.
func (d dialect) Session(ctx context.Context, mode oltp.Mode) (oltp.Session, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	galera := d.t.GaleraNode()
	var tp *tap
	if mode == oltp.ModeProcedures && !galera {
		tp = tapDial(cfg)
	}
	c, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &session{conn: c, galera: galera}
	var sess oltp.Session
	switch mode {
	case oltp.ModeClientSimple:
		sess, err = newClientExec(ctx, s)
	case oltp.ModeProcedures:
		if err = s.prepare(ctx, procStatements); err == nil {
			sess = procSession(s, tp)
		}
	default:
		err = fmt.Errorf("MariaDB runs the transactions as procedures or client-simple, not %s", mode)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return sess, nil
}

// procSession is procedures mode on s: for the polling driver when it can
// speak the connection tp taps, else a goroutine a user's (tp nil on a
// Galera node).
func procSession(s *session, tp *tap) oltp.Session {
	why := galeraRetries
	if tp != nil {
		why = tp.unpolled()
	}
	if why != "" {
		return &procExec{s, why}
	}
	return newRawProcExec(s, tp)
}

// galeraRetries is why a Galera node's sessions run a goroutine a user.
const galeraRetries = "a Galera node's session retries a transaction that lost a conflict with another node, " +
	"which the polling driver, one answer one outcome, does not"

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

// CheckRights: a build makes its tables and procedures in the DSN's
// database.
func (d dialect) CheckRights(ctx context.Context) error {
	return d.t.CheckGrants(ctx, d.t.Config().DBName, mariadb.Privileges, nil, "oltp build makes its tables and procedures in")
}
