package mariadb

import (
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/fault"
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
