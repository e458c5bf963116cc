package store

import (
	"regexp"
	"strconv"
	"strings"
)

// dialect is what differs between SQLite and PostgreSQL in the store's
// SQL, which is written once, for SQLite, with ? placeholders.
type dialect struct {
	postgres bool
}

// rebind turns the ? placeholders into PostgreSQL's $1, $2...; the store's
// SQL has no ? inside a string literal.
func (d dialect) rebind(q string) string {
	if !d.postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// schema adapts a migration's DDL: SQLite's REAL is PostgreSQL's DOUBLE
// PRECISION (its REAL is single precision), its BLOB PostgreSQL's BYTEA,
// and a line that starts "-- postgres: " is PostgreSQL's alone (a comment
// to SQLite).
func (d dialect) schema(ddl string) string {
	if !d.postgres {
		return ddl
	}
	ddl = postgresOnly.ReplaceAllString(ddl, "$1")
	ddl = blobType.ReplaceAllString(ddl, "${1}BYTEA")
	return realType.ReplaceAllString(ddl, "${1}DOUBLE PRECISION")
}

var (
	realType     = regexp.MustCompile(`(\s)REAL\b`)
	blobType     = regexp.MustCompile(`(\s)BLOB\b`)
	postgresOnly = regexp.MustCompile(`(?m)^\s*-- postgres: (.*)$`)
)

// lock serialises migrations: SQLite's transactions are immediate (one
// writer), PostgreSQL's take an advisory lock held to the transaction's
// end, so two calibras that create the store at once do it one by one.
func (d dialect) lock() string {
	if d.postgres {
		return `SELECT pg_advisory_xact_lock(4242370037)`
	}
	return ""
}

// glob is a condition that col matches the glob pattern (* ? [...] [^...],
// as SQLite's GLOB takes it: a backslash is itself), and its argument;
// PostgreSQL gets the same as an anchored regular expression.
func (d dialect) glob(col, pattern string) (string, any) {
	if !d.postgres {
		return col + " GLOB ?", pattern
	}
	return col + " ~ ?", globRegexp(pattern)
}

// globRegexp is a glob as an anchored POSIX regular expression.
func globRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("^")
	inClass := false
	for _, r := range glob {
		switch {
		case inClass:
			if r == ']' {
				inClass = false
			}
			if r == '\\' {
				b.WriteString(`\\`)
				continue
			}
			b.WriteRune(r)
		case r == '*':
			b.WriteString(".*")
		case r == '?':
			b.WriteString(".")
		case r == '[':
			inClass = true
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return b.String()
}
