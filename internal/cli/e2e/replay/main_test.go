//go:build integration

package replay

import (
	"testing"

	"github.com/calibra-bench/calibra/internal/cli"
	"github.com/calibra-bench/calibra/internal/cli/clitest"
)

// TestMain lets the test binary stand in for calibra when a test runs it as
// a child process (the oltp run a profile watches).
func TestMain(m *testing.M) { clitest.Main(m, cli.Main) }
