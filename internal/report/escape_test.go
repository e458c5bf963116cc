package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/calibra-bench/calibra/internal/hostiletest"
)

// report.html and report.md of a run another account wrote, every field
// hostile (hostiletest.Text), over every fixture's kinds of step: no
// terminal escape, control or bidirectional character reaches the reader
// raw, in the page's text, attributes or chart data, and the Markdown
// holds no HTML.
func TestHostileRunIsEscaped(t *testing.T) {
	for _, name := range fixtures(t) {
		dir := hostiletest.Run(t, t.TempDir(), filepath.Join(runs, name))
		if err := Write(dir); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, file := range []string{"report.html", "report.md"} {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			what := name + "'s " + file
			hostiletest.Check(t, what, string(data), file == "report.html")
			if !strings.Contains(string(data), `u202e`) {
				t.Errorf("%s does not show the override as its code point", what)
			}
			if strings.Contains(string(data), "<img src=x>") || file == "report.md" && strings.Contains(string(data), "<") {
				t.Errorf("%s holds the run's HTML", what)
			}
		}
	}
}
