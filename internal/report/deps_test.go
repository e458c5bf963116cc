package report

import (
	gobuild "go/build"
	"strings"
	"testing"
)

// The report and compare read results and nothing of the runner: no
// package that measures may be pulled in by them (docs/design.md).
func TestImportsOnlyResults(t *testing.T) {
	const internal = "github.com/calibra-bench/calibra/internal/"
	allowed := map[string]bool{internal + "results": true, internal + "report/assets": true}
	for _, dir := range []string{".", "assets", "../compare"} {
		pkg, err := gobuild.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, internal) && !allowed[imp] {
				t.Errorf("%s imports %s; it may import only results and the chart assets", pkg.ImportPath, imp)
			}
		}
	}
}
