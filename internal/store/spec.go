// Package store is calibra's results store: every run directory's
// results.json recorded in a database (SQLite, by a pure-Go driver), so
// that runs can be listed and followed over time. The run directory stays
// the source of truth; the store is an index of it (docs/store.md).
package store

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/calibra-bench/calibra/internal/fault"
)

// EnvVar names the store when --store is not given.
const EnvVar = "CALIBRA_STORE"

// Spec is where runs are recorded: a SQLite file, or nowhere.
type Spec struct {
	None bool   // record nothing
	Path string // the SQLite file, when not None
	// Err, when set, is why the default store has no place (no home
	// directory): recording warns with it, the store commands refuse.
	Err error
}

// String is the spec as --store takes it.
func (s Spec) String() string {
	if s.None {
		return "none"
	}
	return "sqlite:" + s.Path
}

const specFix = "use sqlite:PATH or none"

// ParseSpec reads a --store or CALIBRA_STORE value (source names which, for
// the sentence): "sqlite:PATH", "none", or "" for the default file (whose
// absence is Spec.Err, not an error). A PostgreSQL store is refused: it is
// not built yet.
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
		// Never quote the value: it may carry a password.
		return Spec{}, fault.Input(specFix, "%s names a PostgreSQL store, which is not built yet", source)
	case strings.HasPrefix(value, "sqlite:"):
		p := strings.TrimPrefix(value, "sqlite:")
		if p == "" {
			return Spec{}, fault.Input("use sqlite:PATH, e.g. sqlite:/var/lib/calibra/results.db", "%s %q names no file", source, value)
		}
		if strings.HasSuffix(p, "/") {
			return Spec{}, fault.Input("name the file, e.g. sqlite:"+filepath.Join(p, "results.db"), "%s %q names a directory, not a file", source, value)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return Spec{}, fault.Input(specFix, "%s %q cannot be made absolute: %v", source, value, err)
		}
		return Spec{Path: abs}, nil
	}
	return Spec{}, fault.Input(specFix, "%s %q is not a store calibra knows", source, value)
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
