package serve

import (
	gobuild "go/build"
	"strings"
	"testing"
)

// calibra serve reads: the store, run directories and compare's page,
// nothing that measures or writes a run (docs/design.md).
func TestImportsOnlyReaders(t *testing.T) {
	const internal = "github.com/calibra-bench/calibra/internal/"
	allowed := map[string]bool{}
	for _, p := range []string{"store", "results", "compare", "report/assets"} {
		allowed[internal+p] = true
	}
	pkg, err := gobuild.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, internal) && !allowed[imp] {
			t.Errorf("serve imports %s; it may import only the store, results, compare and the chart assets", imp)
		}
	}
}
