package runner

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/calibra-bench/calibra/internal/golden"
	"github.com/calibra-bench/calibra/internal/report"
	"github.com/calibra-bench/calibra/internal/results"
)

// The wording of the end-of-run summary and of report.md, per engine and
// topology: real short runs of PostgreSQL and MariaDB on one server, a
// Galera cluster of three nodes, two --instances and PostgreSQL with a
// standby (testdata/engines/NAME/results.json), and a quick study with
// iocal's sequential points. go test -update rewrites the golden files.
func TestSummaryAndReportGolden(t *testing.T) {
	dirs := map[string]string{"quick": "../results/testdata/runs/quick"}
	for _, n := range []string{"pg", "mariadb", "galera", "instances", "replicas"} {
		dirs[n] = filepath.Join("testdata", "engines", n)
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			r, err := results.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "engines", name+".summary.txt"), []byte(SummaryText(r, r.Status)))
			if name == "quick" {
				return // report's own golden holds its report.md
			}
			var md bytes.Buffer
			if err := report.Build(r, nil).Markdown(&md); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "engines", name+".report.md"), md.Bytes())
		})
	}
}
