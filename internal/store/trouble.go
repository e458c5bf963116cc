package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sys/unix"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/calibra-bench/calibra/internal/fault"
)

// ErrDamaged marks a store whose file fails SQLite's integrity check or
// is no database: it takes no new record until repaired or replaced.
var ErrDamaged = errors.New("the results store is damaged")

// damaged is ErrDamaged with its sentence (an input error: the user
// repairs or replaces the store).
type damaged struct{ error }

func (d damaged) Unwrap() []error { return []error{ErrDamaged, d.error} }

// repairFix is what to do with a damaged SQLite store.
func repairFix(path string) string {
	return fmt.Sprintf("recover what it holds with sqlite3 %s '.recover' | sqlite3 %s.recovered and put that in its place, "+
		"or move it aside and record the run directories again with calibra store import DIR...", path, path)
}

// explain turns what went wrong with the store at where into one sentence
// naming it and the fix: a full disk, a lock held too long, a damaged
// file, a read-only file system. Anything else is err as it was.
func explain(where string, postgres bool, err error) error {
	if err == nil {
		return nil
	}
	code := 0
	if se := (*sqlite.Error)(nil); errors.As(err, &se) {
		code = se.Code() & 0xff // the primary code of an extended one
	}
	pg := ""
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
		pg = pe.Code
	}
	switch {
	case pg == "53100":
		return fault.Input("ask its administrator to free space on the server's disk", "the PostgreSQL store %s has no room: its server's disk is full", where)
	case pg == "55P03":
		return fmt.Errorf("the PostgreSQL store %s is locked: another session has held calibra's migration lock, or this run's record, for more than %s; let it finish (pg_stat_activity on the server names it) and try again", where, BusyTimeout)
	case postgres:
		return err
	case code == sqlite3.SQLITE_FULL, errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT),
		code == sqlite3.SQLITE_IOERR && noRoom(where): // SQLite's -shm file could not grow
		return fault.Input("free space on it, or give --store sqlite:PATH on another file system", "the file system of the results store %s is full", where)
	case code == sqlite3.SQLITE_BUSY, code == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("the results store %s is locked: another process has held a write transaction on it for more than %s; let it finish (fuser %s names it) and try again", where, BusyTimeout, where)
	case code == sqlite3.SQLITE_CORRUPT, code == sqlite3.SQLITE_NOTADB:
		return damaged{fault.Input(repairFix(where), "the results store %s is damaged (%s)", where, sqliteWords(err))}
	case code == sqlite3.SQLITE_READONLY, errors.Is(err, syscall.EROFS):
		return fault.Input("give --store sqlite:PATH on a file system calibra can write (history, serve and store check read it where it is)",
			"the results store %s cannot be written: its file system is read-only", where)
	}
	return err
}

// noRoom says whether the file system of path has no room left for this
// account (root may use the blocks reserved for it).
func noRoom(path string) bool {
	var st unix.Statfs_t
	if unix.Statfs(filepath.Dir(path), &st) != nil {
		return false
	}
	free := st.Bavail
	if os.Geteuid() == 0 {
		free = st.Bfree
	}
	return free*uint64(st.Bsize) < 1<<20
}

// sqliteWords is SQLite's own words for err, without the driver's code.
func sqliteWords(err error) string {
	text := err.Error()
	if i := strings.LastIndex(text, ": "); i >= 0 {
		text = text[i+2:]
	}
	return strings.TrimSpace(strings.Split(text, " (")[0])
}

// checkIntegrity runs SQLite's quick check over the whole file: a store
// whose pages are damaged may still take a write that touches none of
// them, and a record there may be lost with the rest.
func checkIntegrity(ctx context.Context, db *sql.DB, path string) error {
	var verdict string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&verdict); err != nil {
		return explain(path, false, err)
	}
	if verdict == "ok" {
		return nil
	}
	first := strings.Fields(strings.TrimPrefix(strings.TrimSpace(verdict), "*** in database main ***"))
	return damaged{fault.Input(repairFix(path), "the results store %s is damaged (SQLite's integrity check: %s)", path, strings.Join(first, " "))}
}

// CheckFile checks the SQLite store's file with SQLite's integrity check (a
// PostgreSQL store's server keeps its own): an error is ErrDamaged.
func (s *Store) CheckFile(ctx context.Context) error {
	if s.d.postgres {
		return nil
	}
	return checkIntegrity(ctx, s.db, s.Path)
}

// Explain is err, an error of one of s's queries, in one sentence with
// its fix when it is a known trouble (a lock held too long, a damaged
// file).
func (s *Store) Explain(err error) error { return explain(s.Where, s.d.postgres, err) }
