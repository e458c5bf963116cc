package oltp

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestMain lets the test binary stand in for calibra when a test runs it as
// a child process (to send it real signals).
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }

// clitest's helpers, under the names these tests had in internal/cli.
var (
	run               = clitest.Run
	runIn             = clitest.RunIn
	mustRun           = clitest.MustRun
	interruptChild    = clitest.InterruptChild
	signalChild       = clitest.SignalChild
	startUntil        = clitest.StartUntil
	storageDir        = clitest.StorageDir
	noServerLeft      = clitest.NoServerLeft
	existingServer    = clitest.ExistingServer
	requirePostgres   = clitest.RequirePostgres
	requirePostgres18 = clitest.RequirePostgres18
	requireEngine     = clitest.RequireEngine
	requireFio        = clitest.RequireFio
	checkRun          = clitest.CheckRun
	tpmAgrees         = clitest.TPMAgrees
	show              = clitest.Show
)

// lastStep is clitest.LastStep (a generic function has no value to bind).
func lastStep[T any](t *testing.T, out string) (results.Step, T) {
	t.Helper()
	return clitest.LastStep[T](t, out)
}
