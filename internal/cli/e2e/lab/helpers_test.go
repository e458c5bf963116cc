package lab

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
)

// TestMain lets the test binary stand in for calibra when a test runs it as
// a child process (to send it real signals).
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }

// clitest's helpers, under the names these tests had in internal/cli.
var (
	run             = clitest.Run
	mustRun         = clitest.MustRun
	interruptChild  = clitest.InterruptChild
	storageDir      = clitest.StorageDir
	requirePostgres = clitest.RequirePostgres
	requireFio      = clitest.RequireFio
	requireLab      = clitest.RequireLab
	noLabLeft       = clitest.NoLabLeft
	runAudit        = clitest.RunAudit
)
