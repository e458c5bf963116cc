package mariadb

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
	"github.com/calibra-bench/calibra/internal/testenv"
)

// A directory without the server is bad input that says how to install one.
func TestFindBinariesInAnEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := FindBinaries(dir)
	if fault.Code(err) != fault.ExitInput || !strings.Contains(err.Error(), dir+" holds no mariadbd and mariadb-install-db") ||
		!strings.Contains(err.Error(), "apt-get install mariadb-server") {
		t.Fatalf("FindBinaries(%s) = %v: want one sentence naming the directory and the package", dir, err)
	}
}

// An installation another account could change is refused in one
// sentence naming it, before any of its programs runs.
func TestAnotherAccountsInstallationIsRefused(t *testing.T) {
	for _, trap := range testenv.TrapDirs(t, "mariadbd  Ver 10.11.6-MariaDB", "mariadbd", "mariadb-install-db") {
		t.Run(trap.Case, func(t *testing.T) {
			_, err := FindBinaries(trap.Path)
			if fault.Code(err) != fault.ExitInput || !strings.HasPrefix(err.Error(), "the MariaDB installation "+trap.Path+": ") {
				t.Errorf("got %v; want one sentence naming %s", err, trap.Path)
			}
			if trap.Ran() {
				t.Error("a program ran")
			}
		})
	}
}
