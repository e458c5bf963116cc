//go:build integration

package oltp

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/calibra-bench/calibra/internal/cli/clitest"
	"github.com/calibra-bench/calibra/internal/oltp/oltptest"

	"github.com/calibra-bench/calibra/internal/engine"
	"github.com/calibra-bench/calibra/internal/results"
)

// TestTPMDBStress holds the server's count to the client's over many short
// windows after a ramp-up: 50 windows of 5 s on each engine, each within 5
// transactions but for autovacuum's (oltptest.TPMAgrees). It takes some 15 minutes, so it runs only when asked:
// CALIBRA_STRESS=1 go test -tags integration ./internal/cli/e2e/oltp -run TestTPMDBStress -timeout 40m
func TestTPMDBStress(t *testing.T) {
	if os.Getenv("CALIBRA_STRESS") != "1" {
		t.Skip("a stress test of 50 windows an engine; set CALIBRA_STRESS=1 to run it")
	}
	for _, name := range engine.Names() {
		t.Run(name, func(t *testing.T) {
			clitest.RequireEngine(t, name)
			dir := clitest.StorageDir(t)
			study := filepath.Join(t.TempDir(), "stress.yaml")
			body := fmt.Sprintf(`version: 1
name: tpm-db-stress
target: {engine: %s}
steps:
  - {kind: oltp_build, warehouses: 2}
  - {kind: oltp, users: 4, rampup: 2s, duration: 5s, repeat: 50}
`, name)
			if err := os.WriteFile(study, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "run")
			clitest.MustRun(t, 0, "run", "--study", study, "--path", dir, "--out", out, "--progress", "none")
			r, err := results.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			windows, quiet, worst := 0, 0, 0.0
			for _, st := range r.Steps {
				o, ok := st.Body.(*results.OLTP)
				if !ok {
					continue
				}
				windows++
				if err := oltptest.TPMAgrees(o); err != nil {
					t.Errorf("%s, repeat %d: %v", st.Name, st.Repeat, err)
					continue
				}
				if av := o.AutovacuumInWindow; av != nil && *av > 0 {
					t.Logf("repeat %d: autovacuum worked in the window (%d, %s of its transactions left out, %q): %+.0f transactions",
						st.Repeat, *av, oltptest.Show(o.AutovacuumXacts), o.Missing["autovacuum_xacts"], (*o.TPMDB-o.TPMClient)*o.DurationS/60)
					continue
				}
				quiet++
				worst = math.Max(worst, math.Abs((*o.TPMDB-o.TPMClient)*o.DurationS/60))
			}
			if windows != 50 {
				t.Fatalf("%d windows, want 50", windows)
			}
			t.Logf("%s: 50 windows, %d without autovacuum, the largest difference among them %.0f transactions", name, quiet, worst)
		})
	}
}
