// Package store is calibra's results store: every run directory's
// results.json recorded in a database (SQLite, by a pure-Go driver), so
// that runs can be listed and followed over time. The run directory stays
// the source of truth; the store is an index of it (docs/store.md).
package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/secret"
)

// EnvVar names the store when --store is not given.
const EnvVar = "CALIBRA_STORE"

// Spec is where runs are recorded: a SQLite file, a PostgreSQL database,
// or nowhere.
type Spec struct {
	None bool   // record nothing
	Path string // the SQLite file, when neither None nor a PostgreSQL store
	// URL is the PostgreSQL store's connection URL. It may hold a
	// password: never print it, print String.
	URL string
	// Err, when set, is why the default store has no place (no home
	// directory): recording warns with it, the store commands refuse.
	Err error
}

// String is the spec as --store takes it, a password hidden.
func (s Spec) String() string {
	switch {
	case s.None:
		return "none"
	case s.URL != "":
		return secret.RedactDSN(s.URL)
	}
	return "sqlite:" + s.Path
}

// Where names the store in a sentence: the SQLite file, or the
// PostgreSQL URL without its password.
func (s Spec) Where() string {
	if s.URL != "" {
		return secret.RedactDSN(s.URL)
	}
	return s.Path
}

// Forms are the stores --store names, for help and fixes: the store's
// words, so the command line names no database of its own.
const Forms = "sqlite:PATH or postgres://USER@HOST/DB"

const specFix = "use sqlite:PATH, postgres://USER@HOST/DB or none"

// StoreFileHelp is --store-file's help.
const StoreFileHelp = "a file (mode 0600) holding the --store value, e.g. a postgres:// URL with its password"

// Unnamed is msg, an error of the store's, without the name of the store
// it begins with, for a sentence that names the store once.
func (s Spec) Unnamed(msg string) string {
	for _, named := range []string{"the PostgreSQL store " + s.Where() + ": ", s.Where() + ": "} {
		msg = strings.TrimPrefix(msg, named)
	}
	return msg
}

// OnCommandLine is the source of a --store value: one given there must
// not hold a password, which ps shows to every local account.
const OnCommandLine = "--store"

// ParseSpec reads a --store, --store-file or CALIBRA_STORE value (source
// names which, for the sentence; OnCommandLine refuses a password):
// "sqlite:PATH", "postgres://...", "none", or "" for the default file
// (whose absence is Spec.Err, not an error).
func ParseSpec(source, value string) (Spec, error) {
	switch {
	case value == "":
		// Not an error of the command: a run without a home directory
		// still runs, and warns that it was not recorded.
		p, err := DefaultPath()
		return Spec{Path: p, Err: err}, nil
	case value == "none":
		return Spec{None: true}, nil
	case strings.HasPrefix(value, "postgres://"), strings.HasPrefix(value, "postgresql://"):
		return parsePostgres(source, value)
	case strings.HasPrefix(value, "sqlite:"):
		p := strings.TrimPrefix(value, "sqlite:")
		if p == "" {
			return Spec{}, fault.Input("use sqlite:PATH, e.g. sqlite:/var/lib/calibra/results.db", "%s names no file", shown(source, value))
		}
		if strings.HasSuffix(p, "/") {
			return Spec{}, fault.Input("name the file, e.g. sqlite:DIR/results.db", "%s names a directory, not a file", shown(source, value))
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return Spec{}, fault.Input(specFix, "%s cannot be made absolute: %v", shown(source, value), err)
		}
		return Spec{Path: abs}, nil
	}
	return Spec{}, fault.Input(specFix, "%s is not a store calibra knows", shown(source, value))
}

// shown is source with the value it gave, for a sentence: quoted when
// typed on the command line, never when read from a file or the
// environment, which may hold anything (a --store-file of
// /proc/self/environ, /etc/shadow).
func shown(source, value string) string {
	if source != OnCommandLine {
		return "what " + source + " holds"
	}
	return fmt.Sprintf("%s %q", source, secret.RedactDSN(value))
}

// PasswordSources says where a PostgreSQL store's password may come from.
const PasswordSources = "PGPASSWORD, ~/.pgpass, CALIBRA_STORE or a 0600 file named by --store-file"

// parsePostgres checks a PostgreSQL store's URL; an error never quotes it
// (it may hold a password), only says what is wrong.
func parsePostgres(source, value string) (Spec, error) {
	cfg, err := pgx.ParseConfig(value)
	if err != nil {
		// The parser's own words may quote the URL, password and all.
		return Spec{}, fault.Input("write it as postgres://USER@HOST[:PORT]/DB or postgres://USER@/DB?host=/SOCKET/DIR", "%s names a PostgreSQL store whose URL calibra cannot read", source)
	}
	if secret.RedactDSN(value) != value && source == OnCommandLine {
		return Spec{}, fault.Input("drop the password from --store and give it in "+PasswordSources,
			"--store holds a password, which ps shows to every local account")
	}
	if cfg.Database == "" {
		return Spec{}, fault.Input("name the database, e.g. postgres://calibra@db.example/calibra", "%s names no PostgreSQL database", source)
	}
	return Spec{URL: value}, nil
}

// DefaultPath is the default SQLite file: /var/lib/calibra/results.db for
// root, else $XDG_DATA_HOME/calibra/results.db, else
// ~/.local/share/calibra/results.db.
func DefaultPath() (string, error) {
	if os.Geteuid() == 0 {
		return "/var/lib/calibra/results.db", nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "calibra", "results.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", fault.Input("set HOME or XDG_DATA_HOME, or give --store sqlite:PATH or none", "calibra finds no home directory for its results store")
	}
	return filepath.Join(home, ".local", "share", "calibra", "results.db"), nil
}
