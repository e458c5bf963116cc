package cli

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestMain lets the test binary stand in for calibra when a test runs it as
// a child process (to send it real signals).
func TestMain(m *testing.M) { clitest.Main(m, Main) }

// clitest's helpers, under the names this package's tests have always
// used (the end-to-end packages under e2e bind the same ones).
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
	requireMariaDB    = clitest.RequireMariaDB
	requireEngine     = clitest.RequireEngine
	requireGalera     = clitest.RequireGalera
	requireFio        = clitest.RequireFio
	fakeFio           = clitest.FakeFio
	requireLab        = clitest.RequireLab
	noLabLeft         = clitest.NoLabLeft
	runAudit          = clitest.RunAudit
	checkRun          = clitest.CheckRun
	tpmAgrees         = clitest.TPMAgrees
	show              = clitest.Show
	requirePostgres18 = clitest.RequirePostgres18
)

// lastStep is clitest.LastStep (a generic function has no value to bind).
func lastStep[T any](t *testing.T, out string) (results.Step, T) {
	t.Helper()
	return clitest.LastStep[T](t, out)
}
