package layers

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
	mustRun           = clitest.MustRun
	interruptChild    = clitest.InterruptChild
	storageDir        = clitest.StorageDir
	noServerLeft      = clitest.NoServerLeft
	existingServer    = clitest.ExistingServer
	requirePostgres   = clitest.RequirePostgres
	requirePostgres18 = clitest.RequirePostgres18
	requireEngine     = clitest.RequireEngine
	requireFio        = clitest.RequireFio
)

// lastStep is clitest.LastStep (a generic function has no value to bind).
func lastStep[T any](t *testing.T, out string) (results.Step, T) {
	t.Helper()
	return clitest.LastStep[T](t, out)
}
