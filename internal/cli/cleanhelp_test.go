package cli

import (
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/device"
	"github.com/calibra-bench/calibra/internal/engine/mariadb"
	"github.com/calibra-bench/calibra/internal/engine/postgres"
	"github.com/calibra-bench/calibra/internal/lab"
	"github.com/calibra-bench/calibra/internal/runner"
)

// clean --help names every directory clean removes, by the names the
// engines, the lab and the device layer give them.
func TestCleanHelpNamesEverythingItRemoves(t *testing.T) {
	code, stdout, _ := clitest.Run(t, "clean", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, dir := range []string{postgres.DataDirName, postgres.DataDirName + "-replica-K", mariadb.DataDirName,
		mariadb.DataDirName + "-galera-K", runner.InstancesDir + "/K", lab.DirName, device.TestDir} {
		if !strings.Contains(stdout, "PATH/"+dir) {
			t.Errorf("clean --help does not name PATH/%s:\n%s", dir, stdout)
		}
	}
}
