package serve

import (
	gobuild "go/build"
	"strings"
	"testing"
)

// calibra serve reads: the store, and renders with the report's and
// compare's code, nothing that measures or writes a run (docs/design.md).
func TestImportsOnlyReaders(t *testing.T) {
	const internal = "github.com/calibra-bench/calibra/internal/"
	allowed := map[string]bool{}
	for _, p := range []string{"store", "results", "compare", "report", "report/assets"} {
		allowed[internal+p] = true
	}
	pkg, err := gobuild.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, internal) && !allowed[imp] {
			t.Errorf("serve imports %s; it may import only the store, results, compare, the report and the chart assets", imp)
		}
	}
}
